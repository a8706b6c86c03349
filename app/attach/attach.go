// Package attach holds the rules for files a user adds to a message: which
// kinds Parley sends to a model, the limits, and what makes a file
// unacceptable. Every file comes from outside (a picker, a drop, a paste,
// an HTTP client): its name and its declared type are checked against its
// bytes, an image is decoded whole and a PDF's structure is read before it
// is stored.
package attach

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // decoders for Check
	_ "image/jpeg" // decoders for Check
	_ "image/png"  // decoders for Check
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	_ "golang.org/x/image/webp" // decoder for Check
)

// Limits, checked on the server for every file and every message.
const (
	// MaxImageBytes: Anthropic takes images of up to 5 MB through its API,
	// OpenAI 20 MB; a phone's photo or a screenshot fits in 10 MiB.
	MaxImageBytes = 10 << 20
	// MaxPDFBytes: a PDF goes to the model whole, base64-encoded in the
	// request (a third larger); Anthropic takes requests of up to 32 MB,
	// Gemini inline data of up to 20 MB.
	MaxPDFBytes = 10 << 20
	// MaxPDFPages: Anthropic and OpenAI read PDFs of up to 100 pages.
	MaxPDFPages = 100
	// MaxTextBytes: a text file goes to the model whole, as text; 512 KiB
	// is about 130,000 tokens, most of a large context window.
	MaxTextBytes = 512 << 10
	// MaxFiles and MaxMessageBytes bound one message.
	MaxFiles        = 10
	MaxMessageBytes = 20 << 20
	// MaxNameBytes is the longest file name most file systems keep.
	MaxNameBytes = 255
	// maxPixels bounds an image's decoded size (a small PNG can declare a
	// huge canvas): 50 megapixels is more than any camera's photo.
	maxPixels = 50_000_000
)

// Kind is how a file goes to the model.
type Kind string

const (
	Image Kind = "image" // an image part
	Text  Kind = "text"  // its text, with its name
	PDF   Kind = "pdf"   // the provider's document part
)

// File is a checked file.
type File struct {
	Name      string
	MediaType string // image/png, image/jpeg, image/gif, image/webp, application/pdf or text/plain; charset=utf-8
	Kind      Kind
	Data      []byte
}

// ErrRefused wraps every reason a file is not accepted.
var ErrRefused = errors.New("file refused")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRefused}, args...)...)
}

// imageTypes are the images Parley sends, by media type, with their names.
var imageTypes = map[string]string{"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}

// Check accepts a file named name, whose sender said it is of type declared
// ("" when it said nothing), or says why not, naming the file: a name that
// is not a plain file name, an empty or oversize file, a declared type its
// bytes contradict, an image that does not decode whole, a PDF that is not
// whole (or is encrypted, or too long), text that is not UTF-8, or a kind
// Parley does not send.
func Check(name, declared string, data []byte) (File, error) {
	if err := CheckName(name); err != nil {
		return File{}, err
	}
	q := fmt.Sprintf("%q", name)
	if len(data) == 0 {
		return File{}, refuse("%s is empty", q)
	}
	sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(data))
	said, _, _ := mime.ParseMediaType(declared)
	// A declared image or PDF is a claim about the bytes; other declared
	// types (text/x-go, application/json, …) vary by browser and are not.
	if _, claims := imageTypes[said]; (claims || said == "application/pdf") && said != sniffed {
		return File{}, refuse("%s says it is %s, but its content is %s", q, said, sniffed)
	}
	if kind, ok := imageTypes[sniffed]; ok {
		return checkImage(q, kind, sniffed, name, data)
	}
	switch {
	case sniffed == "application/pdf":
		return checkPDF(q, name, data)
	case strings.HasPrefix(sniffed, "text/"):
		if len(data) > MaxTextBytes {
			return File{}, refuse("%s is %s; a text file may be %s at most", q, Size(int64(len(data))), Size(MaxTextBytes))
		}
		if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
			return File{}, refuse("%s is not UTF-8 text", q)
		}
		return File{Name: name, MediaType: "text/plain; charset=utf-8", Kind: Text, Data: data}, nil
	}
	return File{}, refuse("%s is %s, which Parley does not send to a model: attach images (PNG, JPEG, WebP, GIF), PDFs or text files", q, sniffed)
}

// CheckName refuses a name that is not one plain file name: empty, a path
// (a slash or backslash, "." or ".."), control characters, not UTF-8, or
// too long.
func CheckName(name string) error {
	switch {
	case name == "":
		return refuse("a file has no name")
	case len(name) > MaxNameBytes:
		return refuse("the file name %.40q… is longer than %d bytes", name, MaxNameBytes)
	case !utf8.ValidString(name):
		return refuse("the file name %q is not UTF-8", name)
	case name == "." || name == ".." || strings.ContainsAny(name, `/\`):
		return refuse("%q is a path, not a file name", name)
	case strings.ContainsFunc(name, unicode.IsControl):
		return refuse("the file name %q has control characters", name)
	}
	return nil
}

func checkImage(q, kind, mediaType, name string, data []byte) (File, error) {
	if len(data) > MaxImageBytes {
		return File{}, refuse("%s is %s; an image may be %s at most", q, Size(int64(len(data))), Size(MaxImageBytes))
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return File{}, refuse("%s is not a whole %s image: %v", q, kind, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		return File{}, refuse("%s is %d×%d pixels; an image may have %d megapixels at most", q, cfg.Width, cfg.Height, maxPixels/1_000_000)
	}
	if _, _, err := image.Decode(bytes.NewReader(data)); err != nil {
		return File{}, refuse("%s is not a whole %s image: %v", q, kind, err)
	}
	return File{Name: name, MediaType: mediaType, Kind: Image, Data: data}, nil
}

// CheckMessage refuses a message whose files are too many or too big
// together.
func CheckMessage(sizes []int64) error {
	if len(sizes) > MaxFiles {
		return refuse("%d files; a message may have %d at most", len(sizes), MaxFiles)
	}
	var total int64
	for _, n := range sizes {
		total += n
	}
	if total > MaxMessageBytes {
		return refuse("the files add up to %s; a message may have %s at most", Size(total), Size(MaxMessageBytes))
	}
	return nil
}

// Size is n bytes for a person: "812 B", "34 KB", "2.4 MB" (1024-based, as
// file managers show).
func Size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
}

// pdfTail is how far from a PDF's end its %%EOF may be: readers look in
// the last 1024 bytes (the PDF reference's implementation note), and some
// writers leave a few bytes after it.
const pdfTail = 1024

var (
	pdfHeader    = regexp.MustCompile(`\A%PDF-[12]\.[0-9]`)
	pdfStartXref = regexp.MustCompile(`startxref\s+([0-9]{1,10})\s+%%EOF`)
	pdfObject    = regexp.MustCompile(`\A[0-9]{1,10}\s+[0-9]{1,5}\s+obj\b`)
)

// checkPDF reads as much of a PDF as a reader does to find its objects:
// the header, the %%EOF at its end, and the cross-reference (a table or
// a stream) that startxref points at. Its pages are counted when they can
// be read without decompressing anything. An encrypted PDF is refused: no
// model can read it.
func checkPDF(q, name string, data []byte) (File, error) {
	if len(data) > MaxPDFBytes {
		return File{}, refuse("%s is %s; a PDF may be %s at most", q, Size(int64(len(data))), Size(MaxPDFBytes))
	}
	if !pdfHeader.Match(data) {
		return File{}, refuse("%s is not a whole PDF: it has no %%PDF-1.x header", q)
	}
	tail := data[max(0, len(data)-pdfTail):]
	m := pdfStartXref.FindAllSubmatchIndex(tail, -1)
	if len(m) == 0 {
		return File{}, refuse("%s is not a whole PDF: it does not end with startxref and %%%%EOF (cut short?)", q)
	}
	last := m[len(m)-1]
	off, err := strconv.Atoi(string(tail[last[2]:last[3]]))
	if err != nil || off <= 0 || off >= len(data)-len(tail)+last[0] {
		return File{}, refuse("%s is not a whole PDF: its cross-reference offset points outside the file", q)
	}
	xref := bytes.TrimLeft(data[off:], " \t\r\n\f\x00")
	if !bytes.HasPrefix(xref, []byte("xref")) && !pdfObject.Match(xref) {
		return File{}, refuse("%s is not a whole PDF: no cross-reference where startxref points", q)
	}
	if !bytes.Contains(data, []byte("endobj")) {
		return File{}, refuse("%s is not a whole PDF: it has no objects", q)
	}
	if bytes.Contains(xref, []byte("/Encrypt")) {
		return File{}, refuse("%s is an encrypted PDF: a model cannot read it; attach an unprotected copy", q)
	}
	if n := pdfPageCount(data, MaxPDFPages); n > MaxPDFPages {
		return File{}, refuse("%s has more than %d pages; a PDF may have %d at most", q, MaxPDFPages, MaxPDFPages)
	}
	return File{Name: name, MediaType: "application/pdf", Kind: PDF, Data: data}, nil
}

// pdfPageCount counts the page objects (/Type /Page, not the page tree's
// /Pages) that can be read without decompressing anything, up to limit+1;
// 0 when none can: a PDF that keeps its objects in compressed streams.
func pdfPageCount(data []byte, limit int) int {
	n := 0
	for rest := data; n <= limit; {
		i := bytes.Index(rest, []byte("/Type"))
		if i < 0 {
			break
		}
		rest = bytes.TrimLeft(rest[i+len("/Type"):], " \t\r\n\f\x00")
		if after, ok := bytes.CutPrefix(rest, []byte("/Page")); ok && (len(after) == 0 || !pdfNameChar(after[0])) {
			n++
		}
	}
	return n
}

// pdfNameChar reports whether c may go on a PDF name: not whitespace and
// not a delimiter.
func pdfNameChar(c byte) bool {
	return c > ' ' && c < 0x7f && !strings.ContainsRune("()<>[]{}/%", rune(c))
}
