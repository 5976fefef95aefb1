package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

// lifecycleFile is a valid file configuration with the event show.
var lifecycleFile = fmt.Sprintf(`
serve:
  listen: 127.0.0.1:0
  keys:
    signing: {secret: %[1]s}
admin:
  listen: 127.0.0.1:0
  token: admin-token-0123456789
`+showEvent, "3f9a61c2e8b7d405a1c9e36f7b2d8e04c5a1f9b3", "", "127.0.0.1:9")

func lifecycleConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.CheckData([]byte(lifecycleFile), nil, config.RoleProxy)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestOverlay: records replace the file's event of their id or add one,
// their routes join after the file's, origins say which is which, the
// file is untouched, and a record that does not parse is a problem
// naming it.
func TestOverlay(t *testing.T) {
	file := lifecycleConfig(t)
	recs := []admission.EventRecord{
		{ID: "fresh", Revision: 1, Body: []byte(`{"event":{"id":"fresh","on_sale_at":"2031-01-01T10:00:00Z","landing_path":"/fresh/"},"routes":[{"prefix":"/fresh/"}]}`)},
		{ID: "show", Revision: 3, Body: []byte(`{"event":{"id":"show","name":"The Show, moved","on_sale_at":"2030-02-01T10:00:00Z","queue_opens_at":"2020-01-01T10:00:00Z","landing_path":"/show/"}}`)},
	}
	eff, origin, err := overlay(file, recs)
	if err != nil {
		t.Fatal(err)
	}
	if ids := []string{eff.Events[0].ID, eff.Events[1].ID}; len(eff.Events) != 2 || !slices.Equal(ids, []string{"show", "fresh"}) {
		t.Fatalf("events %v", ids)
	}
	if eff.Events[0].Name != "The Show, moved" || origin["show"] != originAPI || origin["fresh"] != originAPI {
		t.Fatalf("show %q, origins %v", eff.Events[0].Name, origin)
	}
	if len(eff.Routes) != 2 || eff.Routes[1].Prefix != "/fresh/" || eff.Routes[1].Event != "fresh" {
		t.Fatalf("routes %+v", eff.Routes)
	}
	if len(file.Events) != 1 || file.Events[0].Name == "The Show, moved" || len(file.Routes) != 1 {
		t.Fatal("overlay changed the file's configuration")
	}
	if p := checkEffective(eff, "fresh", len(file.Routes)); p != nil {
		t.Fatalf("the effective configuration is not valid: %v", p)
	}
	_, origin, _ = overlay(file, nil)
	if origin["show"] != originFile {
		t.Fatalf("origin without records %v", origin)
	}

	_, _, err = overlay(file, []admission.EventRecord{{ID: "x", Revision: 1, Body: []byte(`{"event":{"id":"x","nope":1}}`)},
		{ID: "y", Revision: 1, Body: []byte(`{"event":{"id":"z"}}`)}})
	if err == nil || !strings.Contains(err.Error(), `"x" does not parse`) || !strings.Contains(err.Error(), `"y" holds event "z"`) {
		t.Fatalf("bad records: %v", err)
	}
}

// TestCheckEffective: an event made through the API is validated as the
// file's events are, every problem listed, named as the request names
// them; a route of the record naming a missing origin is caught too.
func TestCheckEffective(t *testing.T) {
	file := lifecycleConfig(t)
	eff, _, err := overlay(file, []admission.EventRecord{{ID: "bad", Revision: 1,
		Body: []byte(`{"event":{"id":"bad","on_sale_at":"2031-01-01T10:00:00Z","queue_opens_at":"2032-01-01T10:00:00Z","caps":{"max_active":-1}},` +
			`"routes":[{"prefix":"/ok/"},{"prefix":"/bad/","origin":"nowhere"}]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	problems := checkEffective(eff, "bad", len(file.Routes))
	all := strings.Join(problems, "\n")
	t.Logf("problems:\n%s", all)
	for _, want := range []string{"event.caps.max_active", "event.queue_opens_at", "routes[1].origin"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %s:\n%s", want, all)
		}
	}
	if strings.Contains(all, "events[1]") || strings.Contains(all, "routes[2]") {
		t.Errorf("problems name the effective configuration's places:\n%s", all)
	}
}

func TestMergePatch(t *testing.T) {
	for _, c := range []struct{ doc, patch, want string }{
		{`{"event":{"id":"a","name":"A","caps":{"max_active":5}}}`, `{"event":{"name":"B","caps":{"max_active":null}}}`,
			`{"event":{"caps":{},"id":"a","name":"B"}}`},
		{`{"event":{"id":"a"},"routes":[{"prefix":"/a/"}]}`, `{"routes":[]}`, `{"event":{"id":"a"},"routes":[]}`},
		{`{"event":{"id":"a","n":1}}`, `{"event":{"n":12345678901234567890}}`, `{"event":{"id":"a","n":12345678901234567890}}`},
	} {
		got, err := mergePatch([]byte(c.doc), []byte(c.patch))
		if err != nil || string(got) != c.want {
			t.Errorf("mergePatch(%s, %s) = %s, %v; want %s", c.doc, c.patch, got, err, c.want)
		}
	}
	for _, bad := range []string{`[]`, `null`, `{"a":1} {}`, `{`} {
		if _, err := mergePatch([]byte(`{}`), []byte(bad)); err == nil {
			t.Errorf("patch %s accepted", bad)
		}
	}
}

// FuzzMergePatch: a merge patch (from the operator API's body) never
// panics, yields one JSON object, and applying it again changes nothing
// (RFC 7396 patches are idempotent).
func FuzzMergePatch(f *testing.F) {
	for _, c := range [][2]string{{`{"event":{"id":"x","caps":{"max_active":3}}}`, `{"event":{"caps":{"max_active":null}}}`},
		{`{"a":[1,2]}`, `{"a":{"b":1}}`}, {`{}`, `{"a":null}`}, {`{"a":1}`, `[1]`}, {`{"a":1}`, `{"a":`}} {
		f.Add([]byte(c[0]), []byte(c[1]))
	}
	f.Fuzz(func(t *testing.T, doc, patch []byte) {
		once, err := mergePatch(doc, patch)
		if err != nil {
			return
		}
		var obj map[string]any
		if json.Unmarshal(once, &obj) != nil || obj == nil {
			t.Fatalf("%s + %s = %s: not an object", doc, patch, once)
		}
		twice, err := mergePatch(once, patch)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("%s + %s = %s, again %s (%v)", doc, patch, once, twice, err)
		}
	})
}
