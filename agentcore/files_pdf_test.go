package agentcore_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// testPDF stands for a PDF app/attach accepted (the checks are its).
var testPDF = []byte("%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\nxref\n0 1\n0000000000 65535 f \ntrailer << /Root 1 0 R >>\nstartxref\n45\n%%EOF\n")

// A PDF goes to the model as the provider's document part (here OpenAI's
// file part with a data URL, as an OpenAI-compatible server gets it), not
// as text (an Ollama model gets its text: llm's TestPDFTextForModelsWithoutPDF).
func TestFilesPDF(t *testing.T) {
	rt, srv, db := newRuntimeDB(t)
	th := thread(t, rt)
	ref, err := db.PutFile(t.Context(), "application/pdf", testPDF)
	if err != nil {
		t.Fatal(err)
	}
	pdf := []agentcore.Part{{Type: "file", Data: agentcore.FileURL(ref), MimeType: "application/pdf", Filename: "paper.pdf", Size: int64(len(testPDF))}}

	srv.Push(scripted.Reply{Text: "It is empty."})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "summarise", Files: pdf}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, rt, th.ID)
	content := gjson.GetBytes(srv.Requests()[0].Body, `messages.#(role=="user")#|@reverse|0.content`)
	if got := content.Get("0.text").String(); got != "summarise" {
		t.Errorf("the text part is %q: the PDF went as text?", got)
	}
	file := content.Get(`#(type=="file").file`)
	if file.Get("filename").String() != "paper.pdf" || file.Get("file_data").String() != "data:application/pdf;base64,"+base64.StdEncoding.EncodeToString(testPDF) {
		t.Errorf("the PDF went as %.200s", content.Raw)
	}
	if strings.Contains(content.Raw, "<file name=") {
		t.Error("the PDF was inlined as text")
	}
}
