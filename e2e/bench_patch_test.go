package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"parley/agentcore/scripted"
)

// sseFrame is what a chat stream sent at once: the events that arrived
// within a few milliseconds of each other (a frame's patches are written
// together; frames are at least 16 ms apart).
type sseFrame struct {
	reply    int  // bytes of the events that patch messages
	other    int  // bytes of the rest: the sidebar, the composer, the header
	complete bool // it says the reply is complete
}

// patchFrames streams text at rate tokens/s (4-byte tokens) into a new
// thread and returns the frames its chat stream sent while the reply was
// written, the last being the one that completed it.
func patchFrames(t *testing.T, s target, text string, rate int) []sseFrame {
	t.Helper()
	id := s.newThread(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/t/"+id+"/stream", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("open the chat stream: %v", err)
	}
	defer resp.Body.Close()
	type event struct {
		at    time.Time
		bytes int
		reply bool // it patches a message
		done  bool
	}
	events := make(chan event, 1<<16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		n, reply, done := 0, false, false
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if n > 0 {
					events <- event{time.Now(), n, reply, done}
				}
				n, reply, done = 0, false, false
				continue
			}
			n += len(line) + 1
			// A message's patches name it: its id, or an id made from it.
			reply = reply || strings.HasPrefix(line, "data: selector #msg-") || strings.HasPrefix(line, "data: selector #body-") ||
				strings.HasPrefix(line, "data: selector #cursor-") || strings.HasPrefix(line, `data: elements <article id="msg-`)
			done = done || strings.Contains(line, `msg-assistant status-complete`)
		}
	}()
	// The stream's first frame is the page's whole state: not a patch.
	time.Sleep(300 * time.Millisecond)
	for len(events) > 0 {
		<-events
	}
	const chunk = 2
	s.Model.Push(scripted.Reply{Tokens: chunks(text, 4), ChunkSize: chunk,
		Delay: time.Duration(float64(time.Second) * chunk / float64(rate))})
	s.say(t, id, "write it out")
	var frames []sseFrame
	var last time.Time
	deadline := time.After(time.Duration(len(text)/4/rate)*time.Second + waitTimeout)
	for {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatal("the chat stream ended before the reply did")
			}
			if len(frames) == 0 || e.at.Sub(last) > 4*time.Millisecond {
				frames = append(frames, sseFrame{})
			}
			last = e.at
			f := &frames[len(frames)-1]
			if e.reply {
				f.reply += e.bytes
			} else {
				f.other += e.bytes
			}
			if e.done {
				f.complete = true
				return frames
			}
		case <-deadline:
			t.Fatalf("the reply did not complete (%d frames)", len(frames))
		}
	}
}

// A long reply at a model's pace costs the page a small patch per frame,
// whatever has been written before: the finished blocks are sent once,
// the open one again.
func TestBenchPatchSize(t *testing.T) {
	if !*benchFlag {
		if frames := patchFrames(t, startParley(t).target(), markdownText(8<<10), 2000); len(frames) < 3 {
			t.Fatalf("%d frames for 8 KB at 2,000 tok/s", len(frames))
		}
		return
	}
	model := newModel(t)
	parley := startParleyProcess(t, t.TempDir(), model)
	start := parley.cpu(t)
	frames := patchFrames(t, parley, markdownText(200<<10), 2000)
	cpu := parley.cpu(t) - start
	largest, total, other := 0, 0, 0
	for _, f := range frames {
		largest = max(largest, f.reply)
		total += f.reply
		other = max(other, f.other)
	}
	fmt.Printf("BENCH patch_frames_200kb_at_2000tps %d frames\n", len(frames))
	fmt.Printf("BENCH patch_largest_reply_frame_200kb_at_2000tps %d bytes\n", largest)
	fmt.Printf("BENCH patch_mean_reply_frame_200kb_at_2000tps %d bytes\n", total/len(frames))
	fmt.Printf("BENCH patch_server_cpu_200kb_at_2000tps %.0f ms\n", ms(cpu))
	fmt.Printf("BENCH patch_largest_other_frame_200kb_at_2000tps %d bytes (sidebar, composer, header: at the run's start and end)\n", other)
}
