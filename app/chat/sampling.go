package chat

// Sampling settings (temperature, max output tokens, top-p) come from three
// places, and the nearest wins, setting by setting: a run's own
// (the API's modelSettings, applied by the runtime after Prepare), the
// chat's (thread metadata, chat menu → Model settings), the model's
// defaults (app settings, Settings → Model settings). A setting none of
// them gives is not sent: the provider's default.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"parley/agentcore"
	"parley/agentcore/llm"
)

// The thread metadata keys of a chat's sampling settings.
const (
	keyTemperature = "temperature"
	keyMaxTokens   = "maxOutputTokens"
	keyTopP        = "topP"
)

// Sampling are the model settings a chat or a model's defaults may set.
// A nil or 0 field is unset: the next place's value applies.
type Sampling struct {
	Temperature     *float64 `json:"temperature,omitempty"`
	MaxOutputTokens int64    `json:"maxOutputTokens,omitempty"`
	TopP            *float64 `json:"topP,omitempty"`
}

// IsZero says s sets nothing.
func (s Sampling) IsZero() bool {
	return s.Temperature == nil && s.MaxOutputTokens == 0 && s.TopP == nil
}

// Or is s with each setting it leaves unset taken from def.
func (s Sampling) Or(def Sampling) Sampling {
	if s.Temperature == nil {
		s.Temperature = def.Temperature
	}
	if s.MaxOutputTokens == 0 {
		s.MaxOutputTokens = def.MaxOutputTokens
	}
	if s.TopP == nil {
		s.TopP = def.TopP
	}
	return s
}

func (s Sampling) equal(o Sampling) bool {
	eq := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	return eq(s.Temperature, o.Temperature) && s.MaxOutputTokens == o.MaxOutputTokens && eq(s.TopP, o.TopP)
}

// Limits are what a model's provider accepts.
type Limits struct {
	MaxTemperature float64
	// MaxOutputTokens is the model's output limit from the catalog, or
	// maxOutputTokensUnknown when the catalog does not know the model.
	MaxOutputTokens int64
	Known           bool // MaxOutputTokens is the model's own
}

const (
	// maxTemperatureAnthropic: Anthropic's API takes 0–1; OpenAI's,
	// OpenRouter's and Gemini's take 0–2.
	maxTemperatureAnthropic = 1.0
	maxTemperature          = 2.0
	// maxOutputTokensUnknown bounds max output tokens for a model the
	// catalog does not know (the API's modelSettings bound).
	maxOutputTokensUnknown = 1_000_000
)

// LimitsOf are the limits of model (provider/model).
func LimitsOf(model string) Limits {
	l := Limits{MaxTemperature: maxTemperature, MaxOutputTokens: maxOutputTokensUnknown}
	provider, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(model)), "/")
	if provider == "anthropic" {
		l.MaxTemperature = maxTemperatureAnthropic
	}
	if info, ok := llm.Lookup(model); ok && info.MaxOutput > 0 {
		l.MaxOutputTokens, l.Known = info.MaxOutput, true
	}
	return l
}

// Check refuses a setting beyond model's limits, naming the setting and
// the limit.
func (s Sampling) Check(model string) error {
	l := LimitsOf(model)
	if t := s.Temperature; t != nil && (math.IsNaN(*t) || *t < 0 || *t > l.MaxTemperature) {
		return fmt.Errorf("temperature must be a number from 0 to %g for %s", l.MaxTemperature, modelName(model))
	}
	if n := s.MaxOutputTokens; n < 0 || n > l.MaxOutputTokens {
		if l.Known {
			return fmt.Errorf("max output tokens must be a whole number from 1 to %d (%s's output limit)", l.MaxOutputTokens, modelName(model))
		}
		return fmt.Errorf("max output tokens must be a whole number from 1 to %d", l.MaxOutputTokens)
	}
	if p := s.TopP; p != nil && (math.IsNaN(*p) || *p < 0 || *p > 1) {
		return fmt.Errorf("top-p must be a number from 0 to 1")
	}
	return nil
}

// within is s without the settings model's limits refuse (a chat's
// settings were checked against the model it had then): those are left
// to the provider's default rather than failing every run.
func (s Sampling) within(model string) Sampling {
	if (Sampling{Temperature: s.Temperature}).Check(model) != nil {
		s.Temperature = nil
	}
	if (Sampling{MaxOutputTokens: s.MaxOutputTokens}).Check(model) != nil {
		s.MaxOutputTokens = 0
	}
	if (Sampling{TopP: s.TopP}).Check(model) != nil {
		s.TopP = nil
	}
	return s
}

func modelName(model string) string {
	if model == "" {
		return "the model"
	}
	return clip(model, maxModelName)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// maxSamplingField bounds a typed value: a number needs no more.
const maxSamplingField = 32

// ParseSampling reads the settings typed in a form ("" is unset) and checks
// them against model's limits. The error names the field and the limit.
func ParseSampling(temperature, maxOutputTokens, topP, model string) (Sampling, error) {
	var s Sampling
	num := func(name, v string) (*float64, error) {
		v = strings.TrimSpace(v)
		if v == "" {
			return nil, nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if len(v) > maxSamplingField || err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%s must be a number", name)
		}
		return &f, nil
	}
	var err error
	if s.Temperature, err = num("temperature", temperature); err != nil {
		return Sampling{}, err
	}
	if s.TopP, err = num("top-p", topP); err != nil {
		return Sampling{}, err
	}
	if v := strings.TrimSpace(maxOutputTokens); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if len(v) > maxSamplingField || err != nil || n < 1 {
			l := LimitsOf(model)
			return Sampling{}, fmt.Errorf("max output tokens must be a whole number from 1 to %d", l.MaxOutputTokens)
		}
		s.MaxOutputTokens = n
	}
	if err := s.Check(model); err != nil {
		return Sampling{}, err
	}
	return s, nil
}

// FormValue is v as a form shows it ("" when unset).
func FormValue(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

func decodeSampling(meta map[string]any) Sampling {
	var s Sampling
	f := func(key string) *float64 {
		v, ok := meta[key].(float64)
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > maxTemperature {
			return nil // odd: the default
		}
		return &v
	}
	s.Temperature, s.TopP = f(keyTemperature), f(keyTopP)
	if s.TopP != nil && *s.TopP > 1 {
		s.TopP = nil
	}
	switch n := meta[keyMaxTokens].(type) {
	case float64:
		if n >= 1 && n <= maxOutputTokensUnknown && n == math.Trunc(n) {
			s.MaxOutputTokens = int64(n)
		}
	case int64:
		if n >= 1 && n <= maxOutputTokensUnknown {
			s.MaxOutputTokens = n
		}
	}
	return s
}

func encodeSampling(meta map[string]any, was, s Sampling) {
	if s.equal(was) {
		return
	}
	for key, v := range map[string]*float64{keyTemperature: s.Temperature, keyTopP: s.TopP} {
		if v == nil {
			delete(meta, key)
		} else {
			meta[key] = *v
		}
	}
	if s.MaxOutputTokens == 0 {
		delete(meta, keyMaxTokens)
	} else {
		meta[keyMaxTokens] = float64(s.MaxOutputTokens) // as JSON reads it back
	}
}

// SetSampling sets a chat's own sampling settings (all three: an unset one
// is removed), checked against the limits of the model the chat uses.
func (c *Chats) SetSampling(ctx context.Context, threadID, model string, s Sampling) error {
	if err := s.Check(model); err != nil {
		return err
	}
	_, err := c.Update(ctx, threadID, func(st *Settings) error { st.Sampling = s; return nil })
	return err
}

// modelSettingsKey is the app setting that holds each model's defaults.
const modelSettingsKey = "modelSettings"

// Bounds of the model defaults: a model name is a provider/model spec,
// and a user sets defaults for a handful of models.
const (
	maxModelName      = 200
	maxModelsWithDefs = 100
)

// ModelDefaults are each model's default sampling settings (Settings →
// Model settings).
type ModelDefaults struct {
	store agentcore.SettingsStore
}

// NewModelDefaults returns the model defaults kept in store.
func NewModelDefaults(store agentcore.SettingsStore) *ModelDefaults {
	return &ModelDefaults{store: store}
}

// All are the defaults of every model that has some.
func (d *ModelDefaults) All(ctx context.Context) (map[string]Sampling, error) {
	raw, ok, err := d.store.GetSetting(ctx, modelSettingsKey)
	if err != nil || !ok {
		return map[string]Sampling{}, err
	}
	var all map[string]Sampling
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, fmt.Errorf("the %s setting: %w", modelSettingsKey, err)
	}
	if all == nil {
		all = map[string]Sampling{}
	}
	return all, nil
}

// Of are model's defaults (none when it has none).
func (d *ModelDefaults) Of(ctx context.Context, model string) (Sampling, error) {
	all, err := d.All(ctx)
	return all[strings.TrimSpace(model)], err
}

// Set sets model's defaults, checked against its limits; a zero s removes
// them.
func (d *ModelDefaults) Set(ctx context.Context, model string, s Sampling) error {
	model = strings.TrimSpace(model)
	if model == "" || len(model) > maxModelName || !strings.Contains(model, "/") || strings.ContainsFunc(model, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Errorf("model must be provider/model (at most %d characters)", maxModelName)
	}
	if err := s.Check(model); err != nil {
		return err
	}
	all, err := d.All(ctx)
	if err != nil {
		return err
	}
	if s.IsZero() {
		delete(all, model)
	} else {
		if _, ok := all[model]; !ok && len(all) >= maxModelsWithDefs {
			return fmt.Errorf("defaults are kept for at most %d models: remove some first", maxModelsWithDefs)
		}
		all[model] = s
	}
	b, err := json.Marshal(all)
	if err != nil {
		return err
	}
	if err := d.store.SetSetting(ctx, modelSettingsKey, b); err != nil {
		return fmt.Errorf("save model settings: %w", err)
	}
	return nil
}

// Models are the models that have defaults, sorted.
func (d *ModelDefaults) Models(ctx context.Context) ([]string, error) {
	all, err := d.All(ctx)
	return slices.Sorted(maps.Keys(all)), err
}

// WithDefaults fills the sampling settings a run's chat leaves unset with
// its model's defaults, after next (which applies the chat's). A store
// that cannot be read leaves the run with the chat's settings.
func (d *ModelDefaults) WithDefaults(next func(agentcore.Thread, *agentcore.StreamOptions)) func(agentcore.Thread, *agentcore.StreamOptions) {
	return func(t agentcore.Thread, opts *agentcore.StreamOptions) {
		if next != nil {
			next(t, opts)
		}
		ctx, cancel := context.WithTimeout(context.Background(), memoryReadTimeout)
		defer cancel()
		def, err := d.Of(ctx, opts.Model)
		if err != nil {
			return
		}
		applySampling(opts, def.within(opts.Model))
	}
}

// applySampling sets what opts leaves unset from s.
func applySampling(opts *agentcore.StreamOptions, s Sampling) {
	got := Sampling{Temperature: opts.Temperature, MaxOutputTokens: opts.MaxOutputTokens, TopP: opts.TopP}.Or(s)
	opts.Temperature, opts.MaxOutputTokens, opts.TopP = got.Temperature, got.MaxOutputTokens, got.TopP
}
