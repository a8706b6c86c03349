package attach

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
)

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{200, 10, 10, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pdfOf is a whole PDF of the given pages, as a writer lays one out: the
// objects, a cross-reference table with each object's offset, and a
// trailer (with extra in its dictionary) that startxref points at.
func pdfOf(pages int, extra string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	kids := make([]string, pages)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", 3+i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages))
	for range pages {
		obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>")
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, extra, xref)
	return b.Bytes()
}

// pdfXrefStream is a PDF 1.5 whose cross-reference is a stream object,
// as most writers make them now.
func pdfXrefStream() []byte {
	p := pdfOf(1, "")
	i := bytes.Index(p, []byte("xref\n"))
	head := p[:i]
	body := fmt.Sprintf("%d 0 obj\n<< /Type /XRef /Size 5 /Root 1 0 R /W [1 2 1] /Length 0 >>\nstream\n\nendstream\nendobj\n", 4)
	return fmt.Appendf(append(head, body...), "startxref\n%d\n%%%%EOF\n", len(head))
}

// Every bad file is refused with its name and why; nothing about it is
// trusted: not its name, not its declared type, not its header.
func TestCheckRefusesHostileFiles(t *testing.T) {
	good := pngOf(t, 4, 3)
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, image.NewGray(image.Rect(0, 0, 2, 2)), nil); err != nil {
		t.Fatal(err)
	}
	// A PNG header that declares a 100,000 × 100,000 canvas.
	pdf := pdfOf(2, "")
	bomb := pngOf(t, 1, 1)
	copy(bomb[16:24], []byte{0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0})
	binary.BigEndian.PutUint32(bomb[29:33], crc32.ChecksumIEEE(bomb[12:29])) // IHDR's own checksum
	for _, tc := range []struct {
		name, declared string
		data           []byte
		want           string
	}{
		{"../../x", "text/plain", []byte("hi"), `"../../x" is a path`},
		{`..\evil.txt`, "text/plain", []byte("hi"), "is a path"},
		{"..", "", []byte("hi"), "is a path"},
		{"", "text/plain", []byte("hi"), "has no name"},
		{"a\x00b.txt", "text/plain", []byte("hi"), "control characters"},
		{"bell\a.png", "image/png", good, "control characters"},
		{"bad\xff.txt", "text/plain", []byte("hi"), "not UTF-8"},
		{strings.Repeat("n", 300) + ".txt", "text/plain", []byte("hi"), "longer than 255 bytes"},
		{"empty.png", "image/png", nil, `"empty.png" is empty`},
		{"cut.png", "image/png", good[:len(good)-20], `"cut.png" is not a whole PNG image`},
		{"head.png", "image/png", good[:30], `"head.png" is not a whole PNG image`},
		{"lie.png", "image/png", []byte("<html><script>alert(1)</script></html>"), `"lie.png" says it is image/png, but its content is text/html`},
		{"lie.jpg", "image/jpeg", good, "says it is image/jpeg, but its content is image/png"},
		{"lie.pdf", "application/pdf", []byte("just text"), "says it is application/pdf"},
		{"doc.pdf", "application/pdf", []byte("%PDF-1.7\n%%EOF"), `"doc.pdf" is not a whole PDF: it does not end with startxref and %%EOF`},
		{"cut.pdf", "application/pdf", pdf[:len(pdf)*2/3], `"cut.pdf" is not a whole PDF`},
		{"tail.pdf", "application/pdf", pdf[:len(pdf)-8], `"tail.pdf" is not a whole PDF`},
		{"renamed.pdf", "application/pdf", []byte("# Notes\nnot a PDF at all\n"), `"renamed.pdf" says it is application/pdf, but its content is text/plain`},
		{"fake.pdf", "application/pdf", []byte("%PDF-1.7\nhello world\nstartxref\n9\n%%EOF\n"), `"fake.pdf" is not a whole PDF: no cross-reference where startxref points`},
		{"far.pdf", "application/pdf", []byte("%PDF-1.7\n1 0 obj <<>> endobj\nstartxref\n99999\n%%EOF\n"), `"far.pdf" is not a whole PDF: its cross-reference offset points outside the file`},
		{"noobj.pdf", "application/pdf", []byte("%PDF-1.7\nxref\n0 1\n0000000000 65535 f \ntrailer <<>>\nstartxref\n9\n%%EOF\n"), `"noobj.pdf" is not a whole PDF: it has no objects`},
		{"header.pdf", "", []byte("%PDF-x.y\n1 0 obj <<>> endobj\nstartxref\n9\n%%EOF\n"), `"header.pdf" is not a whole PDF: it has no %PDF-1.x header`},
		{"secret.pdf", "application/pdf", pdfOf(1, "/Encrypt 9 0 R"), `"secret.pdf" is an encrypted PDF`},
		{"long.pdf", "application/pdf", pdfOf(MaxPDFPages+1, ""), `"long.pdf" has more than 100 pages; a PDF may have 100 at most`},
		{"huge.pdf", "application/pdf", append(append([]byte{}, pdf...), make([]byte, MaxPDFBytes)...), `"huge.pdf" is 10.0 MB; a PDF may be 10.0 MB at most`},
		{"bomb.png", "image/png", bomb, "megapixels at most"},
		{"prog.exe", "application/octet-stream", []byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00"), "which Parley does not send"},
		{"nul.txt", "text/plain", []byte("a\x00b"), "which Parley does not send"},
		{"latin1.txt", "text/plain", []byte("caf\xe9 ol\xe9 " + strings.Repeat("x", 40)), "not UTF-8 text"},
		{"big.txt", "text/plain", bytes.Repeat([]byte("a"), MaxTextBytes+1), "a text file may be 512 KB at most"},
		{"huge.png", "image/png", append(append([]byte{}, good...), make([]byte, MaxImageBytes)...), "an image may be 10.0 MB at most"},
	} {
		_, err := Check(tc.name, tc.declared, tc.data)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%.40q, %q) = %v, want a refusal saying %q", tc.name, tc.declared, err, tc.want)
		}
	}
}

func TestCheckAcceptsImagesAndText(t *testing.T) {
	var g bytes.Buffer
	if err := gif.Encode(&g, image.NewPaletted(image.Rect(0, 0, 2, 2), color.Palette{color.Black, color.White}), nil); err != nil {
		t.Fatal(err)
	}
	var j bytes.Buffer
	if err := jpeg.Encode(&j, image.NewGray(image.Rect(0, 0, 2, 2)), nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, declared string
		data           []byte
		kind           Kind
		mediaType      string
	}{
		{"shot.png", "image/png", pngOf(t, 4, 3), Image, "image/png"},
		{"pasted", "", pngOf(t, 2, 2), Image, "image/png"},
		{"photo.jpg", "image/jpeg", j.Bytes(), Image, "image/jpeg"},
		{"anim.gif", "image/gif", g.Bytes(), Image, "image/gif"},
		{"main.go", "text/x-go", []byte("package main\n\nfunc main() {}\n"), Text, "text/plain; charset=utf-8"},
		{"notes.md", "", []byte("# Notes — naïve café\n"), Text, "text/plain; charset=utf-8"},
		{"page.html", "text/html", []byte("<html><body>hi</body></html>"), Text, "text/plain; charset=utf-8"},
		{"data.json", "application/json", []byte(`{"a": 1}`), Text, "text/plain; charset=utf-8"},
		{"paper.pdf", "application/pdf", pdfOf(3, ""), PDF, "application/pdf"},
		{"dropped.pdf", "", pdfOf(MaxPDFPages, ""), PDF, "application/pdf"},
		{"linked.pdf", "application/pdf", pdfXrefStream(), PDF, "application/pdf"},
	} {
		f, err := Check(tc.name, tc.declared, tc.data)
		if err != nil {
			t.Errorf("Check(%q): %v", tc.name, err)
			continue
		}
		if f.Kind != tc.kind || f.MediaType != tc.mediaType || f.Name != tc.name || !bytes.Equal(f.Data, tc.data) {
			t.Errorf("Check(%q) = %s %s %q, want %s %s", tc.name, f.Kind, f.MediaType, f.Name, tc.kind, tc.mediaType)
		}
	}
}

func TestCheckMessage(t *testing.T) {
	if err := CheckMessage(make([]int64, MaxFiles)); err != nil {
		t.Errorf("%d files: %v", MaxFiles, err)
	}
	if err := CheckMessage(make([]int64, MaxFiles+1)); err == nil || !strings.Contains(err.Error(), "11 files; a message may have 10 at most") {
		t.Errorf("%d files: %v", MaxFiles+1, err)
	}
	if err := CheckMessage([]int64{MaxImageBytes, MaxImageBytes, 1}); err == nil || !strings.Contains(err.Error(), "a message may have 20.0 MB at most") {
		t.Errorf("over the message's bytes: %v", err)
	}
}

// FuzzCheckPDF: whatever the bytes, Check answers without panicking, and
// what it accepts as a PDF starts as one and ends with its trailer.
func FuzzCheckPDF(f *testing.F) {
	f.Add(pdfOf(2, ""))
	f.Add(pdfXrefStream())
	f.Add([]byte("%PDF-1.7\n1 0 obj <<>> endobj\nstartxref\n9\n%%EOF\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Check("x.pdf", "application/pdf", data)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("an error that is no refusal: %v", err)
			}
			return
		}
		if file.Kind != PDF || !bytes.HasPrefix(data, []byte("%PDF-")) || !bytes.Contains(data[max(0, len(data)-1024):], []byte("%%EOF")) {
			t.Fatalf("accepted %q as %s", data[:min(40, len(data))], file.Kind)
		}
	})
}
