package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/starfederation/datastar-go/datastar"

	"parley/agentcore"
	"parley/app/chat"
	"parley/components"
)

// Model settings: a chat's own temperature, max output tokens and top-p
// (the chat menu) and each model's defaults (Settings). The rules and
// limits are app/chat's; these handlers decode, call and render.

// modelDefaults are each model's defaults, kept in the app settings.
func (s *Server) modelDefaults() *chat.ModelDefaults { return chat.NewModelDefaults(s.rt) }

// chatSampling is the header's view of a chat's model settings.
func (s *Server) chatSampling(ctx context.Context, t agentcore.Thread) components.Sampling {
	model := s.threadModel(t)
	own := chat.Of(t).Sampling
	lim := chat.LimitsOf(model)
	v := components.Sampling{Temperature: chat.FormValue(own.Temperature), TopP: chat.FormValue(own.TopP),
		Model: model, MaxTemperature: fmt.Sprint(lim.MaxTemperature), MaxTokens: fmt.Sprint(lim.MaxOutputTokens),
		Defaults: "the provider's default"}
	if own.MaxOutputTokens > 0 {
		v.MaxOutputTokens = fmt.Sprint(own.MaxOutputTokens)
	}
	if def, err := s.modelDefaults().Of(ctx, model); err == nil && !def.IsZero() {
		v.Defaults = "the model's default from Settings (" + samplingText(def) + "), else the provider's"
	}
	return v
}

func samplingText(s chat.Sampling) string {
	var parts []string
	if s.Temperature != nil {
		parts = append(parts, "temperature "+chat.FormValue(s.Temperature))
	}
	if s.MaxOutputTokens > 0 {
		parts = append(parts, fmt.Sprintf("max %d tokens", s.MaxOutputTokens))
	}
	if s.TopP != nil {
		parts = append(parts, "top-p "+chat.FormValue(s.TopP))
	}
	return strings.Join(parts, ", ")
}

// maxSamplingForm bounds a model settings form: three short numbers and a
// model name.
const maxSamplingForm = 4096

// setSampling saves a chat's own model settings (the header's form):
// temperature, maxOutputTokens and topP, each "" for the model's default.
// A value beyond the chat model's limits is refused and nothing is stored.
func (s *Server) setSampling(w http.ResponseWriter, r *http.Request) {
	status := func(msg string, problem bool) {
		_ = datastar.NewSSE(w, r).PatchElementTempl(components.SamplingStatus(msg, problem))
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxSamplingForm)
	if err := r.ParseForm(); err != nil {
		status("Not saved: the form is not readable.", true)
		return
	}
	t, err := s.rt.GetThread(r.Context(), r.PathValue("id"))
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	model := s.threadModel(t)
	in, err := chat.ParseSampling(r.PostFormValue("temperature"), r.PostFormValue("maxOutputTokens"), r.PostFormValue("topP"), model)
	if err == nil {
		err = s.chats().SetSampling(r.Context(), t.ID, model, in)
	}
	switch {
	case agentcore.IsNotFound(err):
		s.httpError(w, r, err)
	case err != nil:
		status("Not saved: "+err.Error()+".", true)
	case in.IsZero():
		status("Cleared: the model's defaults apply.", false)
	default:
		status("Saved: the next reply uses them.", false)
	}
}

// modelSettingsView is Settings' section of the models' defaults.
func (s *Server) modelSettingsView(ctx context.Context) (components.ModelSettings, error) {
	all, err := s.modelDefaults().All(ctx)
	if err != nil {
		return components.ModelSettings{}, err
	}
	models, _ := s.modelDefaults().Models(ctx)
	var v components.ModelSettings
	for _, m := range models {
		d := all[m]
		row := components.ModelSampling{Model: m, Temperature: chat.FormValue(d.Temperature), TopP: chat.FormValue(d.TopP)}
		if d.MaxOutputTokens > 0 {
			row.MaxOutputTokens = fmt.Sprint(d.MaxOutputTokens)
		}
		v.Defaults = append(v.Defaults, row)
	}
	return v, nil
}

// setModelSampling sets a model's defaults (Settings → Model settings);
// all fields empty removes them.
func (s *Server) setModelSampling(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxSamplingForm)
	if err := r.ParseForm(); err != nil {
		s.httpError(w, r, fmt.Errorf("%w: the form is not readable", errBadRequest))
		return
	}
	typed := components.ModelSampling{Model: strings.TrimSpace(r.PostFormValue("model")),
		Temperature: r.PostFormValue("temperature"), MaxOutputTokens: r.PostFormValue("maxOutputTokens"), TopP: r.PostFormValue("topP")}
	in, err := chat.ParseSampling(typed.Temperature, typed.MaxOutputTokens, typed.TopP, typed.Model)
	if err == nil {
		err = s.modelDefaults().Set(r.Context(), typed.Model, in)
	}
	ok := "Saved the defaults of " + typed.Model + "."
	if in.IsZero() {
		ok = "Removed the defaults of " + typed.Model + "."
	}
	fromPage := r.Header.Get("Datastar-Request") == "true"
	if err == nil && !fromPage {
		http.Redirect(w, r, "/settings?"+url.Values{"at": {"model-settings"}, "saved": {ok}}.Encode()+"#model-settings", http.StatusSeeOther)
		return
	}
	page, verr := s.settingsView(r.Context())
	if verr != nil {
		s.httpError(w, r, verr)
		return
	}
	page.Flash = components.Flash{Target: "model-settings", Message: ok}
	if err != nil {
		page.Flash = components.Flash{Target: "model-settings", Message: "Not saved: " + err.Error() + ".", Error: true}
		page.ModelSettings.Form = clipTyped(typed)
	}
	if fromPage {
		_ = datastar.NewSSE(w, r).PatchElementTempl(components.ModelSettingsView(page))
		return
	}
	s.renderSettings(w, r, http.StatusBadRequest, page)
}

// clipTyped keeps what was typed for the form again, cut to the fields'
// length.
func clipTyped(m components.ModelSampling) components.ModelSampling {
	c := func(s string, n int) string {
		if len(s) > n {
			return strings.ToValidUTF8(s[:n], "")
		}
		return s
	}
	return components.ModelSampling{Model: c(m.Model, 200), Temperature: c(m.Temperature, 32), MaxOutputTokens: c(m.MaxOutputTokens, 32), TopP: c(m.TopP, 32)}
}
