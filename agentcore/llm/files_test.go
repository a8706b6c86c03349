package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	_ "image/jpeg" // to read what went to Claude
	"image/png"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"charm.land/fantasy"
	"github.com/tidwall/gjson"

	"parley/agentcore/llm/llmtest"
)

// Files reach each provider in the shape its API documents, and the
// recorded requests fantasy made with an image are Parley's byte for byte.

// TestImagePartsMatchRecording replays fantasy's recorded image requests
// (TestImageUploadAgentStreaming: wish.png with a question, to Claude,
// GPT-5 and Gemini 2.5 Pro): Parley's request for the same message is the
// recording's, the image part included.
func TestImagePartsMatchRecording(t *testing.T) {
	wish := llmtest.Testdata(t, "wish.png")
	for _, tc := range []struct {
		name, cassette, spec, basePath string
		ignore                         []string
	}{
		// Recorded without prompt caching; Parley's breakpoints are checked
		// in cache_test.go.
		{"anthropic", "TestImageUploadAgentStreaming/anthropic-claude-sonnet-4-stream.yaml", "anthropic/claude-sonnet-4-20250514", "", []string{"cache_control"}},
		{"openai", "TestImageUploadAgentStreaming/openai-gpt-5-stream.yaml", "openai/gpt-5", "/v1", nil},
		{"google", "TestImageUploadAgentStreaming/gemini-2.5-pro-stream.yaml", "google/gemini-2.5-pro", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, c, srv := openReplay(t, tc.cassette, tc.spec, tc.basePath)
			parts, err := collect(t, m, Request{
				Messages: []Message{
					{Role: RoleSystem, Text: "You are a helpful assistant"},
					{Role: RoleUser, Text: "Describe the image briefly in English.", Files: []File{{Name: "wish.png", MediaType: "image/png", Data: wish}}},
				},
				MaxOutputTokens: 4000,
			})
			if err != nil {
				t.Fatal(err)
			}
			got, want := srv.Body(0), c.Interactions[0].Request.Body
			if !strings.Contains(want, base64.StdEncoding.EncodeToString(wish)) {
				t.Fatal("the recording does not carry wish.png")
			}
			if !sameJSON(t, got, want, tc.ignore) {
				t.Errorf("the request differs from the recording:\n got %.600s\nwant %.600s", got, want)
			}
			if len(ofType(parts, PartTextDelta)) == 0 {
				t.Error("no answer read")
			}
			checkFinish(t, parts, "stop")
		})
	}
}

// fileServer answers every request with body (an error when status is not
// 200) and keeps the requests' bodies.
type fileServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newFileServer(t *testing.T, status int, body string) *fileServer {
	s := &fileServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, b.String())
		s.mu.Unlock()
		if status != http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write([]byte(body))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *fileServer) last(t *testing.T) gjson.Result {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bodies) != 1 {
		t.Fatalf("%d requests, want 1", len(s.bodies))
	}
	return gjson.Parse(s.bodies[0])
}

// Test files: a small PNG, a GIF, and bytes standing for a PDF (what a
// PDF is, is app/attach's to check; the provider gets the bytes as they
// are).
var (
	testPNG = func() []byte {
		var b bytes.Buffer
		png.Encode(&b, image.NewGray(image.Rect(0, 0, 3, 2)))
		return b.Bytes()
	}()
	testGIF = func() []byte {
		var b bytes.Buffer
		gif.Encode(&b, image.NewPaletted(image.Rect(0, 0, 2, 2), color.Palette{color.Black, color.White}), nil)
		return b.Bytes()
	}()
	testPDF  = []byte("%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\nstartxref\n9\n%%EOF\n")
	testText = []byte("func main() {}\n")
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// The documented shapes of one user message's parts.
const (
	// OpenAI Chat Completions (and OpenRouter's, Ollama's and every
	// OpenAI-compatible server's): content parts "text", "image_url" with a
	// data URL, "file" with a filename and a data URL.
	chatText  = `{"type":"text","text":%q}`
	chatImage = `{"type":"image_url","image_url":{"url":"data:image/png;base64,%s"}}`
	chatPDF   = `{"type":"file","file":{"filename":"paper.pdf","file_data":"data:application/pdf;base64,%s"}}`
	// OpenAI Responses: input_text, input_image with a data URL, input_file.
	respText  = `{"type":"input_text","text":%q}`
	respImage = `{"type":"input_image","image_url":"data:image/png;base64,%s"}`
	respPDF   = `{"type":"input_file","filename":"paper.pdf","file_data":"data:application/pdf;base64,%s"}`
	// Anthropic Messages: text, image and document blocks with base64
	// sources; a document's title is its file name in the characters
	// Anthropic allows there (letters, digits, spaces, hyphens, brackets:
	// fantasy puts a space for any other).
	claudeText  = `{"type":"text","text":%q}`
	claudeImage = `{"type":"image","source":{"type":"base64","media_type":"image/png","data":%q}}`
	claudePDF   = `{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":%q},"title":"paper pdf"}`
	// Gemini generateContent: parts with text or inlineData.
	geminiText  = `{"text":%q}`
	geminiImage = `{"inlineData":{"mimeType":"image/png","data":%q}}`
	geminiPDF   = `{"inlineData":{"mimeType":"application/pdf","data":%q}}`
)

// TestImagePartsPerProvider sends one user message with a text, an image,
// a PDF and a text file to every provider, and reads the parts of the
// request's user message: each file in the shape the provider documents,
// in order, nothing dropped. Ollama takes no PDFs (CheckFile): its request
// names the PDF in a text part instead, which is what a chat that changed
// to an Ollama model sends for an earlier message's PDF (a new one is
// refused before sending).
func TestImagePartsPerProvider(t *testing.T) {
	const question = "What do these say?"
	textFile := "<file name=\"main.go\">\nfunc main() {}\n\n</file>"
	openAIAnswer := openAIWire(kindText, []string{"ok"})
	chat := func(pdf string) []string {
		return []string{fmt.Sprintf(chatText, question), fmt.Sprintf(chatImage, b64(testPNG)), pdf, fmt.Sprintf(chatText, textFile)}
	}
	for _, tc := range []struct {
		name, spec, base string
		tools            []ToolSpec
		status           int // 0: 200 with answer
		answer           string
		content          string // gjson path of the user message's parts
		want             []string
	}{
		{"openai", "openai/gpt-4o", "/v1", nil, 0, openAIAnswer,
			`messages.#(role=="user").content`, chat(fmt.Sprintf(chatPDF, b64(testPDF)))},
		// A request with web_search goes to the Responses API; its answer
		// does not matter here.
		{"openai responses", "openai/gpt-4o", "/v1", []ToolSpec{{Name: WebSearch, ProviderDefined: true}},
			http.StatusBadRequest, `{"error":{"message":"not answered in this test","type":"invalid_request_error"}}`,
			`input.#(role=="user").content`,
			[]string{fmt.Sprintf(respText, question), fmt.Sprintf(respImage, b64(testPNG)), fmt.Sprintf(respPDF, b64(testPDF)), fmt.Sprintf(respText, textFile)}},
		{"anthropic", "anthropic/claude-sonnet-4-5", "", nil, 0, anthropicWire(kindText, []string{"ok"}),
			`messages.#(role=="user").content`,
			[]string{fmt.Sprintf(claudeText, question), fmt.Sprintf(claudeImage, b64(testPNG)), fmt.Sprintf(claudePDF, b64(testPDF)), fmt.Sprintf(claudeText, textFile)}},
		{"google", "google/gemini-2.5-flash", "", nil, 0, geminiWire(kindText, []string{"ok"}),
			`contents.#(role=="user").parts`,
			[]string{fmt.Sprintf(geminiText, question), fmt.Sprintf(geminiImage, b64(testPNG)), fmt.Sprintf(geminiPDF, b64(testPDF)), fmt.Sprintf(geminiText, textFile)}},
		{"openrouter", "openrouter/openai/gpt-4o", "/api/v1", nil, 0, openAIAnswer,
			`messages.#(role=="user").content`, chat(fmt.Sprintf(chatPDF, b64(testPDF)))},
		{"openai-compatible", "openai-compatible/local-model", "/v1", nil, 0, openAIAnswer,
			`messages.#(role=="user").content`, chat(fmt.Sprintf(chatPDF, b64(testPDF)))},
		{"ollama", "ollama/llama3.2-vision", "/v1", nil, 0, openAIAnswer,
			`messages.#(role=="user").content`,
			chat(fmt.Sprintf(chatText, `[The attached PDF "paper.pdf" is not sent: its text could not be read: not a PDF file: missing %%EOF]`))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := tc.status
			if status == 0 {
				status = http.StatusOK
			}
			srv := newFileServer(t, status, tc.answer)
			provider, _, _ := strings.Cut(tc.spec, "/")
			m, err := Open(tc.spec, Config{
				APIKeys:    map[string]string{provider: "test-key"},
				BaseURLs:   map[string]string{provider: srv.URL + tc.base},
				Getenv:     func(string) string { return "" },
				MaxRetries: -1,
			})
			if err != nil {
				t.Fatal(err)
			}
			parts, err := collect(t, m, Request{
				Messages: []Message{
					{Role: RoleSystem, Text: "Be brief."},
					{Role: RoleUser, Text: question, Files: []File{
						{Name: "shot.png", MediaType: "image/png", Data: testPNG},
						{Name: "paper.pdf", MediaType: "application/pdf", Data: testPDF},
						{Name: "main.go", MediaType: "text/plain; charset=utf-8", Data: testText},
					}},
				},
				Tools: tc.tools,
			})
			if tc.status == 0 && (err != nil || joined(ofType(parts, PartTextDelta)) != "ok") {
				t.Errorf("answer %q, %v", joined(ofType(parts, PartTextDelta)), err)
			}
			got := srv.last(t).Get(tc.content).Array()
			if len(got) != len(tc.want) {
				t.Fatalf("%d parts in the user message, want %d: %.400s", len(got), len(tc.want), srv.last(t).Get(tc.content).Raw)
			}
			for i, w := range tc.want {
				if !sameJSON(t, got[i].Raw, w, []string{"cache_control"}) {
					t.Errorf("part %d is\n%.300s\nwant\n%.300s", i, got[i].Raw, w)
				}
			}
		})
	}
}

// Gemini reads no GIFs: a GIF goes to it as a PNG of its first frame; to
// the others as it is.
func TestGIFToGemini(t *testing.T) {
	srv := newFileServer(t, http.StatusOK, geminiWire(kindText, []string{"ok"}))
	m, err := Open("google/gemini-2.5-flash", Config{
		APIKeys: map[string]string{"google": "k"}, BaseURLs: map[string]string{"google": srv.URL},
		Getenv: func(string) string { return "" }, MaxRetries: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := collect(t, m, Request{Messages: []Message{{Role: RoleUser, Files: []File{{Name: "anim.gif", MediaType: "image/gif", Data: testGIF}}}}}); err != nil {
		t.Fatal(err)
	}
	part := srv.last(t).Get(`contents.0.parts.0.inlineData`)
	if part.Get("mimeType").String() != "image/png" {
		t.Fatalf("the GIF went as %s", part.Raw)
	}
	data, _ := base64.StdEncoding.DecodeString(part.Get("data").String())
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil || img.Bounds().Dx() != 2 || img.Bounds().Dy() != 2 {
		t.Errorf("the PNG sent for the GIF: %v", err)
	}

	call, err := toCall(Request{Messages: []Message{{Role: RoleUser, Files: []File{{Name: "anim.gif", MediaType: "image/gif", Data: testGIF}}}}}, "anthropic", "claude-sonnet-4-5")
	if err != nil {
		t.Fatal(err)
	}
	if fp := call.Prompt[0].Content[0]; fp.GetType() != fantasy.ContentTypeFile {
		t.Errorf("the GIF went to Claude as %T", fp)
	}
}

// CheckFile refuses, before sending, what a model cannot read, in words
// that say what to do; and what it refuses never goes unsaid in a request
// (an earlier message's file, after the chat changed models).
func TestCheckFile(t *testing.T) {
	for _, tc := range []struct {
		spec, name, mediaType, want string
	}{
		{"openai/gpt-4o", "shot.png", "image/png", ""},
		{"openai/gpt-4o", "paper.pdf", "application/pdf", ""},
		{"anthropic/claude-sonnet-4-5", "paper.pdf", "application/pdf", ""},
		{"google/gemini-2.5-flash", "paper.pdf", "application/pdf", ""},
		{"openrouter/anthropic/claude-sonnet-4", "paper.pdf", "application/pdf", ""},
		{"openai-compatible/whatever", "paper.pdf", "application/pdf", ""},
		{"ollama/llama3.2-vision", "shot.png", "image/png", ""},
		{"openai/gpt-4o", "main.go", "text/plain; charset=utf-8", ""},
		{"ollama/llama3.2", "main.go", "text/plain; charset=utf-8", ""},
		{"openai/o3-mini", "shot.png", "image/png", `openai/o3-mini does not read images: choose a model that does, or remove "shot.png"`},
		{"openai/o3-mini", "paper.pdf", "application/pdf", ""},  // its text goes (pdfAsText)
		{"ollama/llama3.2", "paper.pdf", "application/pdf", ""}, // its text goes (pdfAsText)
		{"anthropic/claude-sonnet-4-5", "song.mp3", "audio/mpeg", `"song.mp3" is audio/mpeg, which Parley sends to no model as a file`},
	} {
		err := CheckFile(tc.spec, tc.name, tc.mediaType)
		if got := errText(err); got != tc.want {
			t.Errorf("CheckFile(%s, %s) = %q, want %q", tc.spec, tc.name, got, tc.want)
		}
	}

	call, err := toCall(Request{Messages: []Message{{Role: RoleUser, Text: "and this?", Files: []File{{Name: "shot.png", MediaType: "image/png", Data: testPNG}}}}}, "openai", "o3-mini")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(call.Prompt)
	if !strings.Contains(string(b), `[The attached file \"shot.png\" is not sent: openai/o3-mini does not read images`) || strings.Contains(string(b), b64(testPNG)) {
		t.Errorf("an image for o3-mini went as %s", b)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// noisePNG is a PNG of w×h random pixels: it does not compress, so it is
// about 3 bytes a pixel.
func noisePNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Anthropic takes no image over 5 MB of base64 (about 3.75 MiB), which
// Parley's 10 MiB allows: such an image goes to Claude as a JPEG, shrunk to
// the 1568 pixels Claude would have scaled it to anyway; smaller images and
// other providers' go as they are.
func TestLargeImageToClaude(t *testing.T) {
	for _, tc := range []struct {
		name       string
		data       []byte
		mediaType  string
		w, h       int
		unchanged  bool
		toProvider string
	}{
		{"small", testPNG, "image/png", 3, 2, true, "anthropic"},
		{"big, small enough on screen", noisePNG(t, 1400, 1000), "image/jpeg", 1400, 1000, false, "anthropic"},
		{"big and wide", noisePNG(t, 2400, 1000), "image/jpeg", 1568, 653, false, "anthropic"},
		{"big to OpenAI", noisePNG(t, 1400, 1000), "image/png", 1400, 1000, true, "openai"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.unchanged && base64.StdEncoding.EncodedLen(len(tc.data)) <= claudeMaxImage {
				t.Fatalf("the test image is only %d bytes", len(tc.data))
			}
			call, err := toCall(Request{Messages: []Message{{Role: RoleUser, Files: []File{{Name: "photo.png", MediaType: "image/png", Data: tc.data}}}}}, tc.toProvider, "m")
			if err != nil {
				t.Fatal(err)
			}
			fp, ok := call.Prompt[0].Content[0].(fantasy.FilePart)
			if !ok {
				t.Fatalf("the image went as %T", call.Prompt[0].Content[0])
			}
			if fp.MediaType != tc.mediaType || fp.Filename != "photo.png" || tc.unchanged != bytes.Equal(fp.Data, tc.data) {
				t.Fatalf("went as %s %q of %d bytes (unchanged: %v)", fp.MediaType, fp.Filename, len(fp.Data), bytes.Equal(fp.Data, tc.data))
			}
			if base64.StdEncoding.EncodedLen(len(fp.Data)) > claudeMaxImage && tc.toProvider == "anthropic" {
				t.Errorf("%d bytes sent to Claude", len(fp.Data))
			}
			cfg, _, err := image.DecodeConfig(bytes.NewReader(fp.Data))
			if err != nil || cfg.Width != tc.w || cfg.Height != tc.h {
				t.Errorf("sent %d×%d (%v), want %d×%d", cfg.Width, cfg.Height, err, tc.w, tc.h)
			}
		})
	}
}
