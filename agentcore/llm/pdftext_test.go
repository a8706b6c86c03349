package llm

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"charm.land/fantasy"
)

// textPDF is a whole PDF with one page per text, each drawn in Helvetica,
// laid out as a writer does: objects, a cross-reference table with their
// offsets, a trailer.
func textPDF(pages ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	var offsets []int
	obj := func(body string) int {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
		return len(offsets)
	}
	n := len(pages)
	kids := make([]string, n)
	for i := range n {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	for i, text := range pages {
		stream := fmt.Sprintf("BT /F1 12 Tf 72 712 Td (%s) Tj ET", text)
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

// A model that takes no PDF reads its text, page by page; a PDF with no
// text, or one that does not parse, is named to it with why; hostile bytes
// never panic the server.
func TestPDFTextForModelsWithoutPDF(t *testing.T) {
	text, err := pdfText(textPDF("Quarterly report", "Revenue grew 12 percent"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "--- page 1 ---\nQuarterly report\n--- page 2 ---\nRevenue grew 12 percent\n"; text != want {
		t.Errorf("the text is %q, want %q", text, want)
	}
	if _, err := pdfText(testPDF); err == nil {
		t.Error("a PDF with no pages read as text")
	}
	for _, junk := range [][]byte{nil, []byte("%PDF-1.7\n"), bytes.Repeat([]byte("%PDF-1.7 obj << >> xref trailer "), 200),
		append(textPDF("x")[:200], []byte("startxref\n99999999\n%%EOF\n")...)} {
		if _, err := pdfText(junk); err == nil {
			t.Errorf("%.40q read as a PDF", junk)
		}
	}
	big := textPDF(strings.Repeat("a", 60_000), strings.Repeat("b", 60_000))
	if _, err := pdfText(big); err != nil {
		t.Fatal(err)
	}
	if !pdfAsText("ollama", Info{}) || !pdfAsText("openai", Info{NoVision: true}) || pdfAsText("anthropic", Info{}) {
		t.Error("pdfAsText chooses wrong")
	}
	m := userMessage(Message{Role: RoleUser, Text: "summarise", Files: []File{{Name: "q3.pdf", MediaType: "application/pdf",
		Data: textPDF("Quarterly report")}}}, "ollama", "llama3.2")
	want := "<file name=\"q3.pdf\" type=\"text of a PDF\">\n--- page 1 ---\nQuarterly report\n\n</file>"
	if tp, ok := m.Content[len(m.Content)-1].(fantasy.TextPart); len(m.Content) != 2 || !ok || tp.Text != want {
		t.Errorf("an Ollama model was sent %+v", m.Content)
	}
	for _, spec := range []string{"ollama/llama3.2", "openai/o3-mini"} {
		if err := CheckFile(spec, "paper.pdf", "application/pdf"); err != nil {
			t.Errorf("CheckFile(%s, a PDF) = %v: its text goes", spec, err)
		}
	}
}
