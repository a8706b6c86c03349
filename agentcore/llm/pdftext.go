package llm

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ledongthuc/pdf"
)

// maxPDFText bounds the text a PDF gives a model that reads no PDFs: as
// much as a text file may have (app/attach.MaxTextBytes).
const maxPDFText = 512 << 10

// pdfTexts keeps each PDF's text by SHA-256: every request of a chat
// sends its files again, and reading a PDF is not free.
var pdfTexts sync.Map // [32]byte → pdfTextResult

type pdfTextResult struct {
	text string
	err  error
}

// pdfText is the text of a PDF's pages, for a model whose provider takes
// no document parts (Ollama) or that reads no PDFs: each page's text after
// a "--- page N ---" line, cut at maxPDFText with a note. A PDF the
// library cannot read (or one that makes it panic: the bytes came from
// outside) is an error naming why.
func pdfText(data []byte) (string, error) {
	key := sha256.Sum256(data)
	if r, ok := pdfTexts.Load(key); ok {
		res := r.(pdfTextResult)
		return res.text, res.err
	}
	// The bytes came from outside: a reading that does not end in time is
	// given up (its goroutine ends with the process, at worst).
	done := make(chan pdfTextResult, 1)
	go func() {
		text, err := readPDFText(data)
		done <- pdfTextResult{text, err}
	}()
	var res pdfTextResult
	select {
	case res = <-done:
	case <-time.After(pdfTextTimeout):
		res.err = fmt.Errorf("reading its text took more than %v", pdfTextTimeout)
	}
	pdfTexts.Store(key, res)
	return res.text, res.err
}

// pdfTextTimeout bounds reading one PDF's text: a few hundred pages take
// well under a second.
const pdfTextTimeout = 10 * time.Second

func readPDFText(data []byte) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", fmt.Errorf("its text could not be read: %v", r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", fmt.Errorf("its text could not be read: %v", err)
	}
	var b strings.Builder
	for i := 1; i <= r.NumPage(); i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		t, err := p.GetPlainText(nil)
		if err != nil {
			return "", fmt.Errorf("the text of page %d could not be read: %v", i, err)
		}
		fmt.Fprintf(&b, "--- page %d ---\n%s\n", i, strings.TrimSpace(t))
		if b.Len() > maxPDFText {
			return b.String()[:maxPDFText] + fmt.Sprintf("\n[cut: the text of a PDF goes to this model up to %d KB]", maxPDFText>>10), nil
		}
	}
	if strings.TrimSpace(strings.NewReplacer("--- page ", "", " ---", "").Replace(b.String())) == "" {
		return "", fmt.Errorf("it has no text to read (a scan?)")
	}
	return b.String(), nil
}

// pdfAsText says whether a PDF goes to the model of provider as its text
// (see pdfText) rather than as a document part.
func pdfAsText(provider string, info Info) bool { return noPDF[provider] || info.NoVision }

// lookupFor is what the catalog knows of modelID of provider.
func lookupFor(provider, modelID string) Info {
	info, _ := Lookup(provider + "/" + modelID)
	return info
}
