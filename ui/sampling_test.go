package ui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/app/chat"
)

// A chat's model settings from the header's form: saved and shown; hostile
// or out-of-range values refused by name with nothing stored; cleared.
func TestChatSamplingRoute(t *testing.T) {
	s, db, _ := testServerOn(t, nil)
	h := s.Handler()
	th, _ := db.CreateThread(t.Context(), agentcore.Thread{ResourceID: defaultResource,
		Metadata: map[string]any{agentcore.ThreadModelKey: "anthropic/claude-sonnet-4-5"}})
	post := func(path string, form url.Values, datastar bool) *http.Response {
		r := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
		r.Host = "127.0.0.1:7777"
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if datastar {
			r.Header.Set("Datastar-Request", "true")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Result()
	}
	body := func(r *http.Response) string {
		b := new(strings.Builder)
		_, _ = io.Copy(b, r.Body)
		return b.String()
	}
	stored := func() map[string]any {
		got, _ := db.GetThread(t.Context(), th.ID)
		return got.Metadata
	}
	form := func(temp, max, topP string) url.Values {
		return url.Values{"temperature": {temp}, "maxOutputTokens": {max}, "topP": {topP}}
	}
	if b := body(post("/t/"+th.ID+"/sampling", form("0.3", "4096", "0.95"), true)); !strings.Contains(b, "Saved") {
		t.Fatalf("save: %s", b)
	}
	want := chat.Sampling{Temperature: new(0.3), MaxOutputTokens: 4096, TopP: new(0.95)}
	if got, _ := db.GetThread(t.Context(), th.ID); !sameSampling(chat.Of(got).Sampling, want) {
		t.Fatalf("stored %v", stored())
	}
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{form("1.5", "", ""), "temperature must be a number from 0 to 1 for anthropic/claude-sonnet-4-5"},
		{form("NaN", "", ""), "temperature must be a number"},
		{form("1e999", "", ""), "temperature must be a number"},
		{form("<script>alert(1)</script>", "", ""), "temperature must be a number"},
		{form("", "-1", ""), "max output tokens must be a whole number from 1 to 64000"},
		{form("", "64001", ""), "64000 (anthropic/claude-sonnet-4-5&#39;s output limit)"},
		{form("", strings.Repeat("9", 3000), ""), "max output tokens must be a whole number"},
		{form("", "", "2"), "top-p must be a number from 0 to 1"},
	} {
		b := body(post("/t/"+th.ID+"/sampling", c.form, true))
		if !strings.Contains(b, c.want) || !strings.Contains(b, "Not saved") || strings.Contains(b, "<script>") {
			t.Errorf("%v: %s", c.form, b)
		}
		if got, _ := db.GetThread(t.Context(), th.ID); !sameSampling(chat.Of(got).Sampling, want) {
			t.Errorf("%v changed the stored settings: %v", c.form, stored())
		}
	}
	if r := post("/t/"+th.ID+"/sampling", url.Values{"temperature": {strings.Repeat("1", maxSamplingForm)}}, true); !strings.Contains(body(r), "Not saved") {
		t.Error("an oversized form was not refused")
	}
	if r := post("/t/no-such-chat/sampling", form("0.5", "", ""), true); r.StatusCode != http.StatusNotFound {
		t.Errorf("a chat that is not there: %d", r.StatusCode)
	}
	page := do(h, "GET", "/t/"+th.ID, nil).Body.String()
	for _, s := range []string{`id="sampling-temperature" name="temperature" inputmode="decimal" autocomplete="off" maxlength="32" value="0.3"`, "temp 0.3 · max 4096 · top-p 0.95", `id="edit-sampling"`} {
		if !strings.Contains(page, s) {
			t.Errorf("the page does not show %q", s)
		}
	}
	if b := body(post("/t/"+th.ID+"/sampling", form("", "", ""), true)); !strings.Contains(b, "Cleared") || len(stored()) != 1 {
		t.Fatalf("clear: %s, stored %v", b, stored())
	}
}

func sameSampling(a, b chat.Sampling) bool {
	return chat.FormValue(a.Temperature) == chat.FormValue(b.Temperature) && a.MaxOutputTokens == b.MaxOutputTokens &&
		chat.FormValue(a.TopP) == chat.FormValue(b.TopP)
}

// Settings → Model settings: a model's defaults saved, listed, refused
// with the limit named when out of range (what was typed stays, escaped),
// and removed.
func TestModelSamplingSettings(t *testing.T) {
	s, _, _ := testServerOn(t, nil)
	h := s.Handler()
	post := func(form url.Values, datastar bool) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/settings/model-settings", strings.NewReader(form.Encode()))
		r.Host = "127.0.0.1:7777"
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if datastar {
			r.Header.Set("Datastar-Request", "true")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	defaults := func() map[string]chat.Sampling {
		all, err := s.modelDefaults().All(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return all
	}
	if w := post(url.Values{"model": {"openai/gpt-5"}, "temperature": {"1.2"}, "maxOutputTokens": {"8000"}}, false); w.Code != http.StatusSeeOther {
		t.Fatalf("save: %d %s", w.Code, w.Body)
	}
	if d := defaults()["openai/gpt-5"]; chat.FormValue(d.Temperature) != "1.2" || d.MaxOutputTokens != 8000 || d.TopP != nil {
		t.Fatalf("stored %+v", d)
	}
	page := do(h, "GET", "/settings", nil).Body.String()
	if !strings.Contains(page, `<tr data-model="openai/gpt-5"><td><code>openai/gpt-5</code></td><td>1.2</td><td>8000</td><td>–</td>`) {
		t.Fatal("Settings does not list the model's defaults")
	}
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"model": {"anthropic/claude-opus-4-1"}, "temperature": {"1.1"}}, "temperature must be a number from 0 to 1 for anthropic/claude-opus-4-1"},
		{url.Values{"model": {"anthropic/claude-opus-4-1"}, "maxOutputTokens": {"32001"}}, "from 1 to 32000 (anthropic/claude-opus-4-1&#39;s output limit)"},
		{url.Values{"model": {"<script>x</script>/y"}, "topP": {"0.5x"}}, "top-p must be a number"},
		{url.Values{"model": {"no-provider"}, "topP": {"0.5"}}, "model must be provider/model"},
	} {
		w := post(c.form, true)
		if b := w.Body.String(); !strings.Contains(b, c.want) || strings.Contains(b, "<script>x") {
			t.Errorf("%v: %s", c.form, b)
		}
		if w := post(c.form, false); w.Code != http.StatusBadRequest {
			t.Errorf("%v from a plain form: %d", c.form, w.Code)
		}
		if len(defaults()) != 1 {
			t.Errorf("%v stored %v", c.form, defaults())
		}
	}
	if w := post(url.Values{"model": {"openai/gpt-5"}}, true); !strings.Contains(w.Body.String(), "Removed the defaults of openai/gpt-5") || len(defaults()) != 0 {
		t.Fatalf("remove: %s, %v", w.Body, defaults())
	}
}
