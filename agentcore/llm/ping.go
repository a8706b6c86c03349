package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Default API addresses, for the connection test (the SDKs keep their own).
const (
	defaultOpenAIBase     = "https://api.openai.com/v1"
	defaultAnthropicBase  = "https://api.anthropic.com"
	defaultGoogleBase     = "https://generativelanguage.googleapis.com"
	defaultOpenRouterBase = "https://openrouter.ai/api/v1"
)

// Providers lists the provider names in picker order.
func Providers() []string { return providerNames() }

// KeyEnvs are the environment variables a provider's key is read from.
func KeyEnvs(provider string) []string {
	def, _ := lookupProvider(provider)
	return def.keyEnvs
}

// BaseEnv is the environment variable of a provider's base URL ("" when it
// has none).
func BaseEnv(provider string) string {
	def, _ := lookupProvider(provider)
	return def.baseEnv
}

// Keyless reports whether a provider runs without a key (a local server).
func Keyless(provider string) bool {
	def, _ := lookupProvider(provider)
	return def.keyless
}

// Ping makes the smallest real request that proves a provider's key and
// address work: it lists the provider's models (for OpenRouter, it reads
// the key's own record, as its model list needs no key). It costs no
// tokens. The answer says how many models the server offers.
func Ping(ctx context.Context, provider string, cfg Config) (string, error) {
	path := ""
	if provider == "openrouter" {
		path = "/key"
	}
	body, u, err := getModels(ctx, provider, cfg, path)
	if err != nil {
		return "", err
	}
	if provider == "openrouter" {
		return "the key is valid", nil
	}
	var list struct {
		Data   []json.RawMessage `json:"data"`   // OpenAI, Anthropic
		Models []json.RawMessage `json:"models"` // Google
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return "", fmt.Errorf("%s answered something that is not a model list: %s", u, excerpt(body))
	}
	return fmt.Sprintf("connected: %d models offered", len(list.Data)+len(list.Models)), nil
}

// Bounds on a provider's model list: it comes from outside, and a picker
// of more than a few hundred entries helps nobody.
const (
	maxListedModels = 500
	maxModelIDLen   = 200
)

// ListModels asks a provider which models it offers and returns them as
// "provider/model" strings, sorted. An id that is empty, too long, or
// holds spaces or control characters is left out: ids are outside data.
func ListModels(ctx context.Context, provider string, cfg Config) ([]string, error) {
	body, u, err := getModels(ctx, provider, cfg, "")
	if err != nil {
		return nil, err
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"` // OpenAI, Anthropic, OpenRouter, Ollama
		Models []struct {
			Name    string   `json:"name"` // "models/gemini-2.5-flash"
			Methods []string `json:"supportedGenerationMethods"`
		} `json:"models"` // Google
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("%s answered something that is not a model list: %s", u, excerpt(body))
	}
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	for _, m := range list.Models {
		if len(m.Methods) == 0 || slices.Contains(m.Methods, "generateContent") {
			ids = append(ids, strings.TrimPrefix(m.Name, "models/"))
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !validModelID(id) || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, provider+"/"+id)
	}
	slices.Sort(out)
	if len(out) > maxListedModels {
		out = out[:maxListedModels]
	}
	return out, nil
}

// validModelID: printable, no spaces, of a sane length.
func validModelID(id string) bool {
	if id == "" || len(id) > maxModelIDLen || !utf8.ValidString(id) {
		return false
	}
	for _, r := range id {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// getModels GETs a provider's model list (or, with path, another
// endpoint beside it) with its key, and returns the body and the address.
func getModels(ctx context.Context, provider string, cfg Config, path string) ([]byte, string, error) {
	def, ok := lookupProvider(provider)
	if !ok {
		return nil, "", fmt.Errorf("unknown provider %q (known: %s)", provider, strings.Join(providerNames(), ", "))
	}
	key, base := def.key(cfg), def.baseURL(cfg)
	if key == "" && !def.keyless {
		return nil, "", fmt.Errorf("%s: no API key: set one here or in %s", provider, strings.Join(def.keyEnvs, " or "))
	}
	if base == "" && def.keyless {
		return nil, "", fmt.Errorf("%s: no server address: set one here or in %s", provider, def.baseEnv)
	}
	path = cmp.Or(path, "/models")
	var u string
	h := http.Header{}
	switch provider {
	case "anthropic":
		u = strings.TrimRight(cmp.Or(base, defaultAnthropicBase), "/") + "/v1" + path
		h.Set("x-api-key", key)
		h.Set("anthropic-version", "2023-06-01")
	case "google":
		u = strings.TrimRight(cmp.Or(base, defaultGoogleBase), "/") + "/v1beta" + path
		h.Set("x-goog-api-key", key)
	case "openrouter":
		u = strings.TrimRight(cmp.Or(base, defaultOpenRouterBase), "/") + path
		h.Set("Authorization", "Bearer "+key)
	case "ollama":
		u = ollamaBaseURL(base) + path
	default: // openai, openai-compatible
		u = strings.TrimRight(cmp.Or(base, defaultOpenAIBase), "/") + path
		if key != "" {
			h.Set("Authorization", "Bearer "+key)
		}
	}
	if provider == "anthropic" || provider == "google" {
		// Their lists are paged; one large page is the picker's share.
		if provider == "anthropic" {
			u += "?limit=1000"
		} else {
			u += "?pageSize=1000"
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, u, fmt.Errorf("%s: %w", provider, err)
	}
	req.Header = h
	client := cmp.Or(cfg.HTTPClient, http.DefaultClient)
	resp, err := client.Do(req)
	if err != nil {
		return nil, u, fmt.Errorf("%s: %w", provider, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode != http.StatusOK {
		return nil, u, fmt.Errorf("%s answered %s: %s", u, resp.Status, excerpt(body))
	}
	return body, u, nil
}

// excerpt is the start of an error body, on one line.
func excerpt(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	if s == "" {
		return "(no body)"
	}
	return s
}
