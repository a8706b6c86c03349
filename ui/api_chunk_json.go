package ui

import (
	"bufio"
	"encoding/json"
	"maps"
	"strconv"
)

// writeChunk writes c as a line of the SSE stream, "data: <c as
// json.Marshal encodes it>\n\n", the raw values of its payload of at least
// from bytes (a tool call's arguments, a tool's result) written from the
// event in pieces (writeSpliced): a write_file call of N bytes sends its
// arguments twice, in tool-call and in tool-result, and each was encoded
// in a buffer grown to several times N, then copied again into the line.
// An error is one of encoding, and then nothing is written; what the
// client could not be sent, w keeps (bufio.Writer's error).
func writeChunk(w *bufio.Writer, c chunk, from int) error {
	p, _ := c.Payload.(map[string]any)
	var big []bigValue
	var small map[string]any
	for k, v := range p {
		r, ok := v.(json.RawMessage)
		if !ok || len(r) < from || !json.Valid(r) {
			continue
		}
		if small == nil {
			small = maps.Clone(p)
		}
		big = append(big, bigValue{raw: r})
		small[k] = json.RawMessage(apiQuotedMark + strconv.Itoa(len(big)-1) + `\u0000"`)
	}
	if small != nil {
		sc := c
		sc.Payload = small
		if b, err := json.Marshal(sc); err == nil {
			if pieces, ok := splicedPieces(b, big); ok {
				w.WriteString("data: ")
				writeSpliced(w, b, big, pieces)
				w.WriteString("\n\n")
				return nil
			}
		}
	}
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	w.WriteString("data: ")
	w.Write(data)
	w.WriteString("\n\n")
	return nil
}
