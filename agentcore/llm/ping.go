package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
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
	def, ok := lookupProvider(provider)
	if !ok {
		return "", fmt.Errorf("unknown provider %q (known: %s)", provider, strings.Join(providerNames(), ", "))
	}
	key, base := def.key(cfg), def.baseURL(cfg)
	if key == "" && !def.keyless {
		return "", fmt.Errorf("%s: no API key: set one here or in %s", provider, strings.Join(def.keyEnvs, " or "))
	}
	if base == "" && def.keyless {
		return "", fmt.Errorf("%s: no server address: set one here or in %s", provider, def.baseEnv)
	}
	var u string
	h := http.Header{}
	switch provider {
	case "anthropic":
		u = strings.TrimRight(cmp.Or(base, defaultAnthropicBase), "/") + "/v1/models"
		h.Set("x-api-key", key)
		h.Set("anthropic-version", "2023-06-01")
	case "google":
		u = strings.TrimRight(cmp.Or(base, defaultGoogleBase), "/") + "/v1beta/models"
		h.Set("x-goog-api-key", key)
	case "openrouter":
		u = strings.TrimRight(cmp.Or(base, defaultOpenRouterBase), "/") + "/key"
		h.Set("Authorization", "Bearer "+key)
	case "ollama":
		u = ollamaBaseURL(base) + "/models"
	default: // openai, openai-compatible
		u = strings.TrimRight(cmp.Or(base, defaultOpenAIBase), "/") + "/models"
		if key != "" {
			h.Set("Authorization", "Bearer "+key)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("%s: %w", provider, err)
	}
	req.Header = h
	client := cmp.Or(cfg.HTTPClient, http.DefaultClient)
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("%s: %w", provider, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s answered %s: %s", u, resp.Status, excerpt(body))
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
