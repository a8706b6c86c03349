package llm

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"strings"
	"time"

	"charm.land/fantasy"
	"charm.land/fantasy/providers/anthropic"
	"charm.land/fantasy/providers/google"
)

// ErrStalled is wrapped by the error that ends a stream on which no part
// arrived for the idle timeout.
var ErrStalled = errors.New("stream stalled")

// The texts of the two time limits; each says where it is changed.
const (
	firstTokenLimit = "no answer from the provider in %s (the wait for the first token: Settings, --first-token-timeout or " + FirstTokenTimeoutEnv + ")"
	silenceLimit    = "no data from the provider for %s (the silence limit: Settings, --idle-timeout or " + IdleTimeoutEnv + ")"
)

// errNoFinish ends a stream that closed without a finish or an error.
var errNoFinish = errors.New("stream ended without a finish")

// model is a fantasy language model behind the Model interface.
type model struct {
	spec     string
	provider string // the spec's provider name, prefixed to every error but *UnsupportedToolError
	modelID  string // the spec's model name
	lm       fantasy.LanguageModel
	// searchLM serves requests with provider-defined tools when the
	// provider has them on another API only (OpenAI: the Responses API,
	// while lm speaks Chat Completions). Nil: lm serves them.
	searchLM fantasy.LanguageModel
	idle     time.Duration // the longest silence between two parts
	first    time.Duration // the longest wait for the first part
	retry    fantasy.RetryOptions
	// sdk: Parley reads lm's successful streams itself (sdkstream.go).
	sdk sdkStream
}

func (m *model) Spec() string { return m.spec }

// Stream yields parts as the provider sends them. Failures before the
// first part (429, 5xx, transport errors) are retried with backoff;
// after a part has been yielded a failure ends the stream, since the
// caller has already shown the partial answer.
func (m *model) Stream(ctx context.Context, req Request) iter.Seq2[Part, error] {
	return func(yield func(Part, error) bool) {
		responses := m.searchLM != nil && usesProviderTools(req)
		call, err := toCallFor(req, m.provider, m.modelID, responses)
		var unsupported *UnsupportedToolError
		if errors.As(err, &unsupported) {
			yield(Part{}, err) // names the provider already
			return
		}
		if err != nil {
			yield(Part{}, fmt.Errorf("%s: %w", m.provider, err))
			return
		}
		lm := m.lm
		if responses {
			lm = m.searchLM
		}
		// Cancelling on the way out, however we leave, ends the reader
		// goroutine and the HTTP request.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		switch m.sdk {
		case sdkOpenAI, sdkCompat, sdkOpenRouter: // the arguments are a JSON string
			if s := spliceInputs(&call); s != nil {
				ctx = withSplices(ctx, s)
			}
		}

		retry := fantasy.RetryWithExponentialBackoffRespectingRetryHeaders[*attempt](m.retry)
		a, err := retry(ctx, func() (*attempt, error) { return m.start(ctx, lm, call, req) })
		if err != nil {
			yield(Part{}, describe(m.provider, err))
			return
		}
		p := a.first
		for {
			if !yield(p, nil) || p.Type == PartFinish {
				return
			}
			if p, err = a.next(ctx); err != nil {
				yield(Part{}, describe(m.provider, err))
				return
			}
		}
	}
}

// attempt is one HTTP call to the provider. A goroutine drains fantasy's
// stream into parts so that the consumer can give up on a silent
// provider: fantasy's iterator blocks inside the HTTP body read.
type attempt struct {
	parts chan fantasy.StreamPart
	sdk   sdkStream
	idle  time.Duration
	// firstWait bounds the wait for the provider's first part; heard: a
	// part has come, and idle bounds the silences from then on.
	firstWait time.Duration
	heard     bool
	conv      converter
	pending   []Part // converted but not yet yielded
	first     Part
}

// start opens an attempt and waits for its first part, so that the retry
// loop sees every failure that happens before anything was yielded.
func (m *model) start(ctx context.Context, lm fantasy.LanguageModel, call fantasy.Call, req Request) (*attempt, error) {
	actx, cancel := context.WithCancel(ctx)
	a := &attempt{parts: make(chan fantasy.StreamPart), idle: m.idle, firstWait: m.first, sdk: m.sdk}
	a.conv.anthropic = m.provider == anthropic.Name
	if m.provider == google.Name {
		// What the adapter cannot do with Gemini, its HTTP client does.
		a.conv.gemini = newGeminiCall(req)
		actx = withGeminiCall(actx, a.conv.gemini)
	}
	go a.read(actx, lm, call)
	first, err := a.next(ctx)
	if err != nil {
		cancel()
		return nil, retryable(err)
	}
	a.first = first
	// The attempt lives until Stream's context is cancelled.
	context.AfterFunc(ctx, cancel)
	return a, nil
}

// read runs fantasy's stream and forwards every part until the stream
// ends or ctx is done.
func (a *attempt) read(ctx context.Context, lm fantasy.LanguageModel, call fantasy.Call) {
	defer close(a.parts)
	send := func(p fantasy.StreamPart) bool {
		select {
		case a.parts <- p:
			return true
		case <-ctx.Done():
			return false
		}
	}
	// A provider adapter choking on odd wire data must not take the app
	// down with it.
	defer func() {
		if r := recover(); r != nil {
			send(fantasy.StreamPart{Type: fantasy.StreamPartTypeError, Error: fmt.Errorf("provider adapter panicked: %v", r)})
		}
	}()
	var took *captured
	if a.sdk != sdkNone {
		took = a.sdk.capture()
		ctx = withCapture(ctx, took)
	}
	taken := func() bool { return took != nil && took.resp != nil }
	stream, err := lm.Stream(ctx, call)
	if err != nil {
		send(fantasy.StreamPart{Type: fantasy.StreamPartTypeError, Error: err})
		return
	}
	if !taken() {
		// Gemini's request goes out inside the iterator (so does every
		// request of a provider whose stream stays fantasy's). Once it is
		// taken, fantasy reads an empty body: what it yields then is not
		// the answer.
		for p := range stream {
			if taken() || !send(p) {
				break
			}
		}
	}
	if taken() {
		// fantasy has sent the request and got a stream: read it in
		// linear time (sdkstream.go).
		a.sdk.read(ctx, took.resp, send)
	}
}

// next returns the next part worth yielding, or the error that ends the
// stream. Any part from the provider, yielded or not, resets the idle
// timer.
func (a *attempt) next(ctx context.Context) (Part, error) {
	if len(a.pending) > 0 {
		p := a.pending[0]
		a.pending = a.pending[1:]
		return p, nil
	}
	wait, silence := a.idle, silenceLimit
	if !a.heard {
		wait, silence = a.firstWait, firstTokenLimit
	}
	idle := time.NewTimer(wait)
	defer idle.Stop()
	for {
		select {
		case fp, ok := <-a.parts:
			if !ok {
				if err := ctx.Err(); err != nil {
					return Part{}, err // our cancel ended the provider's stream first
				}
				return Part{}, errNoFinish
			}
			if fp.Type == fantasy.StreamPartTypeError {
				if err := ctx.Err(); err != nil {
					return Part{}, err // the provider saw our cancel
				}
				if fp.Error == nil {
					return Part{}, errors.New("unknown provider error")
				}
				return Part{}, fp.Error
			}
			a.heard = true
			if ps := a.conv.parts(fp); len(ps) > 0 {
				a.pending = ps[1:]
				return ps[0], nil
			}
			wait, silence = a.idle, silenceLimit
			idle.Reset(wait)
		case <-idle.C:
			return Part{}, fmt.Errorf("%w: "+silence, ErrStalled, FormatTimeout(wait))
		case <-ctx.Done():
			return Part{}, ctx.Err()
		}
	}
}

// retryable prepares err for fantasy's retry loop, which looks up
// "retry-after" and "retry-after-ms" in lower case. fantasy's openai and
// anthropic adapters keep the canonical "Retry-After" spelling (their
// lower-casing writes into the wrong map), so without this the header
// would be honoured only by the luck of map iteration.
func retryable(err error) error {
	var pe *fantasy.ProviderError
	if errors.As(err, &pe) && pe.ResponseHeaders != nil {
		for k, v := range maps.Clone(pe.ResponseHeaders) {
			pe.ResponseHeaders[strings.ToLower(k)] = v
		}
	}
	return err
}
