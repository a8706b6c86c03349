package exchange

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/png"
	"strings"
	"testing"

	"parley/agentcore"
)

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 3, 3))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func shaOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// threadWithFile is sampleThread whose first message carries an image
// named name.
func threadWithFile(t *testing.T, name string) (agentcore.Thread, []agentcore.Message, map[string]StoredFile) {
	th, msgs := sampleThread()
	img := pngBytes(t)
	ref := shaOf(img)
	msgs[0].Content.Parts = append(msgs[0].Content.Parts, agentcore.Part{Type: "file", Data: agentcore.FileURL(ref),
		MimeType: "image/png", Filename: name, Size: int64(len(img))})
	return th, msgs, map[string]StoredFile{ref: {MimeType: "image/png", Data: img}}
}

// A thread's files travel in its JSON export and come back checked: the
// bytes must be the file their SHA-256 names and pass attach's checks, and
// every file a message names must be there.
func TestJSONFilesRoundTrip(t *testing.T) {
	th, msgs, files := threadWithFile(t, "shot.png")
	data, err := JSON(th, msgs, t0, files)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Read(data)
	if err != nil {
		t.Fatal(err)
	}
	for ref, f := range files {
		if got := res.Files[ref]; got.MimeType != "image/png" || !bytes.Equal(got.Data, f.Data) {
			t.Errorf("the file came back as %s, %d bytes", got.MimeType, len(got.Data))
		}
	}
	if p := res.Threads[0].Messages[0].Content.Parts; len(p) != 2 || p[1].Filename != "shot.png" {
		t.Errorf("the message's parts came back as %+v", p)
	}

	for _, tc := range []struct {
		name string
		edit func(string) string
		want string
	}{
		{"a file whose bytes are another's", func(s string) string {
			return strings.Replace(s, `"data": "iVBOR`, `"data": "AVBOR`, 1)
		}, "its data is not the file that SHA-256 names"},
		{"a message naming a file the export lacks", func(s string) string {
			i := strings.Index(s, `"files"`)
			return s[:strings.LastIndex(s[:i], ",")] + "\n}\n"
		}, `its file "shot.png" is not among the export's files`},
		{"files that are no object", func(s string) string {
			i := strings.Index(s, `"files"`)
			return s[:i] + `"files": [1]` + "\n}\n"
		}, "files: want an object"},
	} {
		if _, err := Read([]byte(tc.edit(string(data)))); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}

	// Bytes that hash right but are no image: refused as attach refuses them.
	html := []byte("<html><script>alert(1)</script></html>")
	th, msgs, _ = threadWithFile(t, "x.png")
	msgs[0].Content.Parts[1].Data = agentcore.FileURL(shaOf(html))
	data, _ = JSON(th, msgs, t0, map[string]StoredFile{shaOf(html): {MimeType: "image/png", Data: html}})
	if _, err := Read(data); err == nil || !strings.Contains(err.Error(), "says it is image/png, but its content is text/html") {
		t.Errorf("a fake image: %v", err)
	}
}

// Markdown names each file of a message as a code span: nothing in its
// name is markup.
func TestMarkdownNamesFiles(t *testing.T) {
	th, msgs, _ := threadWithFile(t, "[click](javascript:alert(1)) `x`.png")
	md := string(Markdown(th, msgs, t0))
	if !strings.Contains(md, "- Attached: ``[click](javascript:alert(1)) `x`.png`` (image/png, ") {
		t.Errorf("the attachment line:\n%s", md)
	}
}
