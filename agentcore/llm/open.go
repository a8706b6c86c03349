package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"charm.land/fantasy"
	"charm.land/fantasy/providers/anthropic"
	"charm.land/fantasy/providers/google"
	"charm.land/fantasy/providers/openai"
	"charm.land/fantasy/providers/openaicompat"
	"charm.land/fantasy/providers/openrouter"
	"github.com/openai/openai-go/v3/option"
)

const (
	// DefaultIdleTimeout ends a stream that has gone silent. Reasoning
	// models may think for a minute before their first token; past 90s
	// without a single part the connection is almost surely dead, and a
	// user staring at a spinner deserves an error they can retry.
	DefaultIdleTimeout = 90 * time.Second
	// DefaultFirstTokenTimeout is how long a model may stay silent before
	// its first part: reasoning models think for minutes before they say
	// anything, and some APIs send nothing meanwhile; a slow local model
	// loads first.
	DefaultFirstTokenTimeout = 10 * time.Minute
	// DefaultMaxRetries is how often a 429/5xx is retried before giving
	// up: four attempts ride out a typical rate-limit window.
	DefaultMaxRetries = 3
	// DefaultRetryBaseDelay is the first backoff step (then 2s, 4s);
	// Retry-After / retry-after-ms from the provider win when given.
	DefaultRetryBaseDelay = time.Second

	// defaultOllamaHost is where `ollama serve` listens out of the box.
	defaultOllamaHost = "http://127.0.0.1:11434"
)

// Config carries explicit settings; anything left empty falls back to the
// environment and then to the defaults above.
type Config struct {
	// APIKeys maps a provider name ("openai", "anthropic", …) to its key;
	// a key here wins over the environment (keys saved in Settings).
	APIKeys map[string]string
	// BaseURLs maps a provider name to its API base URL, winning over the
	// environment (e.g. https://api.openai.com/v1).
	BaseURLs map[string]string
	// HTTPClient is used for every request; nil means the SDK default.
	HTTPClient *http.Client
	// Getenv reads the environment; nil means os.Getenv. Tests pass a
	// map lookup so they never depend on the process environment.
	Getenv func(string) string
	// IdleTimeout ends a stream when no part arrives for this long once
	// one has; 0 means PARLEY_IDLE_TIMEOUT (a Go duration, e.g. "3m") or
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// FirstTokenTimeout ends a request whose first part does not come in
	// this long; 0 means PARLEY_FIRST_TOKEN_TIMEOUT or
	// DefaultFirstTokenTimeout.
	FirstTokenTimeout time.Duration
	// FirstTokenTimeouts and IdleTimeouts map a provider name to its own
	// limits (saved in Settings), winning over the global ones above and
	// the environment: the provider is the one that knows how slow its
	// models are.
	FirstTokenTimeouts map[string]time.Duration
	IdleTimeouts       map[string]time.Duration
	// MaxRetries bounds retries of 429/5xx/transport failures before the
	// first part; 0 means DefaultMaxRetries, negative disables retries.
	MaxRetries int
	// RetryBaseDelay is the first backoff delay, doubled per retry;
	// 0 means DefaultRetryBaseDelay.
	RetryBaseDelay time.Duration
}

// endpoint is what a provider constructor needs.
type endpoint struct {
	key, baseURL string
	client       *http.Client
}

// providerDef describes one supported provider.
type providerDef struct {
	name    string
	keyEnvs []string // the first non-empty one is used
	baseEnv string
	// keyless providers run without a key (local servers); they need a
	// base URL instead, unless defaultBase is set.
	keyless     bool
	defaultBase string
	open        func(endpoint) (fantasy.Provider, error)
	// openProviderTools opens the provider for requests with
	// provider-defined tools, when they need another API than open's.
	openProviderTools func(endpoint) (fantasy.Provider, error)
	// sdk: Parley reads the provider's successful streams itself.
	sdk sdkStream
	// client wraps the provider's HTTP client below the capture of its
	// streams, so that what it does to a response is in the one taken.
	client func(*http.Client) *http.Client
}

func openAIOptions(e endpoint) []openai.Option {
	opts := []openai.Option{openai.WithAPIKey(e.key)}
	if e.baseURL != "" {
		opts = append(opts, openai.WithBaseURL(e.baseURL))
	}
	if e.client != nil {
		opts = append(opts, openai.WithHTTPClient(e.client))
	}
	return opts
}

// providers in the order the model picker lists them.
var providers = []providerDef{
	{
		name:    "openai",
		keyEnvs: []string{"OPENAI_API_KEY"},
		baseEnv: "OPENAI_BASE_URL",
		sdk:     sdkOpenAI,
		open: func(e endpoint) (fantasy.Provider, error) {
			return openai.New(openAIOptions(e)...) // chat completions: no WithUseResponsesAPI
		},
		// OpenAI's web_search exists on the Responses API only; requests
		// with it go there, whatever the model (a model without the tool
		// gets OpenAI's own error).
		openProviderTools: func(e endpoint) (fantasy.Provider, error) {
			return openai.New(append(openAIOptions(e),
				openai.WithUseResponsesAPI(),
				openai.WithResponsesAPIFunc(func(string) bool { return true }))...)
		},
	},
	{
		name:    "anthropic",
		keyEnvs: []string{"ANTHROPIC_API_KEY"},
		baseEnv: "ANTHROPIC_BASE_URL",
		sdk:     sdkAnthropic,
		open: func(e endpoint) (fantasy.Provider, error) {
			opts := []anthropic.Option{anthropic.WithAPIKey(e.key)}
			if e.baseURL != "" {
				opts = append(opts, anthropic.WithBaseURL(e.baseURL))
			}
			if e.client != nil {
				opts = append(opts, anthropic.WithHTTPClient(e.client))
			}
			return anthropic.New(opts...)
		},
	},
	{
		name:    "google",
		keyEnvs: []string{"GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY"},
		baseEnv: "GOOGLE_BASE_URL",
		sdk:     sdkGemini,
		// geminiClient sends and reads Google Search (gemini.go).
		client: geminiClient,
		open: func(e endpoint) (fantasy.Provider, error) {
			opts := []google.Option{google.WithGeminiAPIKey(e.key), google.WithHTTPClient(e.client)}
			if e.baseURL != "" {
				opts = append(opts, google.WithBaseURL(e.baseURL))
			}
			return google.New(opts...)
		},
	},
	{
		name:    "openrouter",
		keyEnvs: []string{"OPENROUTER_API_KEY"},
		sdk:     sdkOpenRouter,
		open: func(e endpoint) (fantasy.Provider, error) {
			opts := []openrouter.Option{openrouter.WithAPIKey(e.key)}
			client := e.client
			if e.baseURL != "" {
				// fantasy's openrouter provider has no base-URL option.
				client = rebased(client, openrouter.DefaultURL, e.baseURL)
			}
			if client != nil {
				opts = append(opts, openrouter.WithHTTPClient(client))
			}
			return openrouter.New(opts...)
		},
	},
	{
		name:        "ollama",
		baseEnv:     "OLLAMA_HOST",
		keyless:     true,
		defaultBase: defaultOllamaHost,
		sdk:         sdkCompat,
		open: func(e endpoint) (fantasy.Provider, error) {
			return openCompat(e.key, ollamaBaseURL(e.baseURL), e.client)
		},
	},
	{
		name:    "openai-compatible",
		keyEnvs: []string{"OPENAI_COMPATIBLE_API_KEY"},
		baseEnv: "OPENAI_COMPATIBLE_BASE_URL",
		keyless: true,
		sdk:     sdkCompat,
		open: func(e endpoint) (fantasy.Provider, error) {
			return openCompat(e.key, e.baseURL, e.client)
		},
	},
}

// openCompat opens an OpenAI-compatible server. The key is always set,
// even when empty: openai-go otherwise falls back to $OPENAI_API_KEY and
// would send the user's OpenAI key to a third-party server.
func openCompat(key, baseURL string, client *http.Client) (fantasy.Provider, error) {
	opts := []openaicompat.Option{
		openaicompat.WithBaseURL(baseURL),
		openaicompat.WithSDKOptions(option.WithAPIKey(key)),
	}
	if client != nil {
		opts = append(opts, openaicompat.WithHTTPClient(client))
	}
	return openaicompat.New(opts...)
}

// ollamaBaseURL turns an OLLAMA_HOST value ("host:port", "http://host",
// or a full ".../v1") into the OpenAI-compatible API base.
func ollamaBaseURL(host string) string {
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	host = strings.TrimRight(host, "/")
	if !strings.HasSuffix(host, "/v1") {
		host += "/v1"
	}
	return host
}

// Open returns the model named by spec ("provider/model"). Credentials
// and base URLs come from cfg first, then from the environment.
func Open(spec string, cfg Config) (Model, error) {
	name, modelID, ok := strings.Cut(spec, "/")
	if !ok {
		return nil, fmt.Errorf("llm: model %q: want \"provider/model\", e.g. \"openai/gpt-4o\"", spec)
	}
	def, ok := lookupProvider(name)
	if !ok {
		return nil, fmt.Errorf("llm: model %q: unknown provider %q (known: %s)", spec, name, strings.Join(providerNames(), ", "))
	}
	first, idle, err := Timeouts(cfg, name)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(modelID) == "" {
		return nil, fmt.Errorf("llm: model %q: no model name after %q", spec, name+"/")
	}
	e := endpoint{key: def.key(cfg), baseURL: def.baseURL(cfg), client: cfg.HTTPClient}
	if def.client != nil {
		e.client = def.client(e.client)
	}
	if def.sdk != sdkNone {
		e.client = capturing(e.client)
	}
	if e.key == "" && !def.keyless {
		return nil, fmt.Errorf("llm: %s: no API key: set %s", name, strings.Join(def.keyEnvs, " or "))
	}
	if e.baseURL == "" && def.keyless {
		return nil, fmt.Errorf("llm: %s: no server address: set %s", name, def.baseEnv)
	}
	p, err := def.open(e)
	if err != nil {
		return nil, fmt.Errorf("llm: open %s: %w", name, err)
	}
	// Creating a language model does no I/O (genai only builds a client).
	lm, err := p.LanguageModel(context.Background(), modelID)
	if err != nil {
		return nil, fmt.Errorf("llm: open %s: %w", spec, err)
	}
	var searchLM fantasy.LanguageModel
	if def.openProviderTools != nil {
		sp, err := def.openProviderTools(e)
		if err != nil {
			return nil, fmt.Errorf("llm: open %s: %w", name, err)
		}
		if searchLM, err = sp.LanguageModel(context.Background(), modelID); err != nil {
			return nil, fmt.Errorf("llm: open %s: %w", spec, err)
		}
	}
	retry := fantasy.RetryOptions{
		MaxRetries:     cfg.MaxRetries,
		InitialDelayIn: cmp.Or(cfg.RetryBaseDelay, DefaultRetryBaseDelay),
		BackoffFactor:  2,
	}
	switch {
	case cfg.MaxRetries == 0:
		retry.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		retry.MaxRetries = 0
	}
	return &model{
		spec:     spec,
		provider: name,
		modelID:  modelID,
		lm:       lm,
		searchLM: searchLM,
		idle:     idle,
		first:    first,
		retry:    retry,
		sdk:      def.sdk,
	}, nil
}

// Available lists the providers that can be opened with cfg as it
// stands, in picker order. Ollama and openai-compatible count once their
// server address is configured (OLLAMA_HOST, OPENAI_COMPATIBLE_BASE_URL or
// cfg.BaseURLs); whether the server is up is left to the caller to probe.
func Available(cfg Config) []string {
	var names []string
	for _, def := range providers {
		configured := def.key(cfg) != ""
		if def.keyless {
			configured = cfg.BaseURLs[def.name] != "" || getenv(cfg, def.baseEnv) != ""
		}
		if configured {
			names = append(names, def.name)
		}
	}
	return names
}

func (d providerDef) key(cfg Config) string {
	if k := cfg.APIKeys[d.name]; k != "" {
		return k
	}
	for _, env := range d.keyEnvs {
		if k := getenv(cfg, env); k != "" {
			return k
		}
	}
	return ""
}

func (d providerDef) baseURL(cfg Config) string {
	return cmp.Or(cfg.BaseURLs[d.name], getenv(cfg, d.baseEnv), d.defaultBase)
}

// Environment variables holding the global time limits.
const (
	FirstTokenTimeoutEnv = "PARLEY_FIRST_TOKEN_TIMEOUT"
	IdleTimeoutEnv       = "PARLEY_IDLE_TIMEOUT"
)

// Timeouts are the limits a model of provider gets with cfg: the wait for
// its first part and the longest silence after it. A provider's own value
// wins, then the global one, then the environment, then the default; a
// provider of "" gives the global limits. An environment variable that is
// no positive duration is an error naming it.
func Timeouts(cfg Config, provider string) (first, idle time.Duration, err error) {
	first, err = timeout(cfg, cmp.Or(cfg.FirstTokenTimeouts[provider], cfg.FirstTokenTimeout), FirstTokenTimeoutEnv, DefaultFirstTokenTimeout)
	if err != nil {
		return 0, 0, err
	}
	idle, err = timeout(cfg, cmp.Or(cfg.IdleTimeouts[provider], cfg.IdleTimeout), IdleTimeoutEnv, DefaultIdleTimeout)
	return first, idle, err
}

// timeout is set, else the duration in the environment variable env, else
// def.
func timeout(cfg Config, set time.Duration, env string, def time.Duration) (time.Duration, error) {
	if set > 0 {
		return set, nil
	}
	v := getenv(cfg, env)
	if v == "" {
		return def, nil
	}
	d, err := ParseTimeout(v)
	if err != nil {
		return 0, fmt.Errorf("llm: %s=%q: %w", env, v, err)
	}
	return d, nil
}

// ParseTimeout reads a time limit as people write it: a Go duration such
// as 90s, 10m or 1h30m, more than zero.
func ParseTimeout(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return 0, errors.New("want a positive duration such as 90s or 10m")
	}
	return d, nil
}

// FormatTimeout writes a limit the way ParseTimeout reads it, short: 10m,
// 90s, 1h30m.
func FormatTimeout(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d >= time.Second && d%time.Second == 0 && d < 10*time.Minute:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

func getenv(cfg Config, key string) string {
	if key == "" {
		return ""
	}
	if cfg.Getenv != nil {
		return strings.TrimSpace(cfg.Getenv(key))
	}
	return strings.TrimSpace(os.Getenv(key))
}

func lookupProvider(name string) (providerDef, bool) {
	i := slices.IndexFunc(providers, func(d providerDef) bool { return d.name == name })
	if i < 0 {
		return providerDef{}, false
	}
	return providers[i], true
}

func providerNames() []string {
	names := make([]string, len(providers))
	for i, d := range providers {
		names[i] = d.name
	}
	return names
}

// rebased returns a client that sends requests meant for the from prefix
// to the to prefix instead.
func rebased(c *http.Client, from, to string) *http.Client {
	var out http.Client
	if c != nil {
		out = *c
	}
	out.Transport = rebase{from: from, to: strings.TrimRight(to, "/"), next: cmp.Or[http.RoundTripper](out.Transport, http.DefaultTransport)}
	return &out
}

type rebase struct {
	from, to string
	next     http.RoundTripper
}

func (r rebase) RoundTrip(req *http.Request) (*http.Response, error) {
	rest, ok := strings.CutPrefix(req.URL.String(), r.from)
	if !ok {
		return r.next.RoundTrip(req)
	}
	u, err := url.Parse(r.to + rest)
	if err != nil {
		return nil, fmt.Errorf("rebase %s: %w", req.URL, err)
	}
	req = req.Clone(req.Context()) // a RoundTripper must not modify its request
	req.URL, req.Host = u, ""
	return r.next.RoundTrip(req)
}
