package app

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"parley/agentcore"
)

// The chat header's model box offers the models the configured provider
// lists, fetched afresh by Settings' connection test; the ids are outside
// data and reach the page as escaped text only.
func TestModelPickerOffersProviderModels(t *testing.T) {
	var asked atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/models" {
			http.NotFound(w, r)
			return
		}
		asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object":"list","data":[{"id":"local-large"},{"id":"local-small"},{"id":"\"><img/src=x/onerror=alert(1)>');//"}]}`))
	}))
	defer api.Close()
	s := serveFresh(t)
	for path, v := range map[string]url.Values{
		"/settings/providers/openai-compatible/base": {"url": {api.URL}},
		"/settings/providers/openai-compatible/key":  {"key": {"sk-local-0123456789abcdef"}},
	} {
		if code, body := s.post(t, path, v); code != http.StatusSeeOther {
			t.Fatalf("%s: %d %s", path, code, body)
		}
	}
	code, body := s.post(t, "/settings/providers/openai-compatible/test", map[string]any{})
	if code != http.StatusOK || !strings.Contains(body, "connected: 3 models offered") {
		t.Fatalf("test connection: %d %s", code, body)
	}
	if asked.Load() < 2 {
		t.Fatalf("the connection test did not fetch the model list (%d requests)", asked.Load())
	}
	th, err := s.in.Runtime.CreateThread(t.Context(), agentcore.Thread{ResourceID: "parley"})
	if err != nil {
		t.Fatal(err)
	}
	page := s.get(t, "/t/"+th.ID)
	i := strings.Index(page, `<datalist id="models">`)
	if i < 0 {
		t.Fatal("the chat header has no model list")
	}
	list := page[i:]
	list = list[:strings.Index(list, "</datalist>")]
	for _, want := range []string{DemoModel, "openai-compatible/local-large", "openai-compatible/local-small"} {
		if !strings.Contains(list, `<option value="`+want+`">`) {
			t.Errorf("the model box does not offer %s:\n%s", want, list)
		}
	}
	if strings.Contains(page, "<img/src=x") || strings.Contains(page, `onerror=alert(1)>'`) {
		t.Error("a model id from the provider reached the page as markup")
	}
	if !strings.Contains(list, "&lt;img/src=x/onerror=alert(1)&gt;") {
		t.Errorf("the hostile id is not offered as escaped text:\n%s", list)
	}
	if settings := s.get(t, "/settings"); !strings.Contains(settings, `<option value="openai-compatible/local-large">`) {
		t.Error("the default model's list in Settings does not offer the provider's models")
	}
}
