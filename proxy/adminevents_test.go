package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/static"
)

// rigEvents is the lifecycle over the rig's engine, for the handlers'
// tests: the serving program's (package app) reads the configuration
// format, which the proxy does not know; this one reads id, the times and
// max_active, and applies them with the engine's Apply as app does.
type rigEvents struct {
	r   *rig
	mu  sync.Mutex
	api map[string]bool
}

type rigRecord struct {
	Event *struct {
		ID           *string    `json:"id"`
		QueueOpensAt *time.Time `json:"queue_opens_at"`
		OnSaleAt     *time.Time `json:"on_sale_at"`
		Caps         *struct {
			MaxActive *int `json:"max_active"`
		} `json:"caps"`
	} `json:"event"`
}

func (e *rigEvents) origin(id string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.api[id] {
		return "api"
	}
	return "file"
}

func (e *rigEvents) configs() []admission.EventConfig {
	var out []admission.EventConfig
	for _, id := range e.r.engine.Events() {
		c, _ := e.r.engine.Config(id)
		out = append(out, c)
	}
	return out
}

// set applies rec to c; problems as app names them.
func (rec rigRecord) set(c *admission.EventConfig) error {
	var problems []string
	if ev := rec.Event; ev != nil {
		if ev.QueueOpensAt != nil {
			c.QueueOpensAt = *ev.QueueOpensAt
		}
		if ev.OnSaleAt != nil {
			c.OnSaleAt = *ev.OnSaleAt
		}
		if ev.Caps != nil && ev.Caps.MaxActive != nil {
			if *ev.Caps.MaxActive < 1 {
				problems = append(problems, "event.caps.max_active: must be at least 1")
			}
			c.Caps.MaxActive = *ev.Caps.MaxActive
		}
	}
	if len(problems) > 0 {
		return &EventProblems{Problems: problems}
	}
	return nil
}

func (e *rigEvents) Create(_ context.Context, body []byte) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var rec rigRecord
	if err := json.Unmarshal(body, &rec); err != nil || rec.Event == nil || rec.Event.ID == nil || *rec.Event.ID == "" {
		return "", &EventProblems{Problems: []string{"event.id: is required"}}
	}
	id := *rec.Event.ID
	if slices.Contains(e.r.engine.Events(), id) {
		return id, ErrEventExists
	}
	c := admission.EventConfig{ID: id, QueueOpensAt: t0.Add(-time.Hour), OnSaleAt: t0.Add(time.Hour)}
	if err := rec.set(&c); err != nil {
		return id, err
	}
	if _, err := e.r.engine.Apply(append(e.configs(), c)); err != nil {
		return id, err
	}
	e.api[id] = true
	return id, e.reproxy()
}

// reproxy gives the proxy the settings and pages of the events in force.
func (e *rigEvents) reproxy() error {
	o := e.r.opts
	o.Events = slices.DeleteFunc(slices.Clone(o.Events), func(x Event) bool { return x.ID != "show" && x.ID != "other" })
	pcs := []static.PageConfig{{Event: "show", Name: "The Show", Prefix: "/_wr"}, {Event: "other", Name: "Other", Prefix: "/_wr"}}
	for _, id := range slices.Sorted(maps.Keys(e.api)) {
		if id == "show" || id == "other" {
			continue // the file's, patched
		}
		o.Events = append(o.Events, Event{ID: id, LandingPath: "/" + id + "/"})
		pcs = append(pcs, static.PageConfig{Event: id, Name: id, Prefix: "/_wr"})
	}
	pages, err := static.New(pcs)
	if err != nil {
		return err
	}
	o.Pages = pages
	if err := e.r.p.Reload(o); err != nil {
		return err
	}
	e.r.opts = o
	return nil
}

func (e *rigEvents) Patch(_ context.Context, id string, patch []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var rec rigRecord
	if err := json.Unmarshal(patch, &rec); err != nil {
		return &EventProblems{Problems: []string{"event: must be an object"}}
	}
	all := e.configs()
	i := slices.IndexFunc(all, func(c admission.EventConfig) bool { return c.ID == id })
	if i < 0 {
		return admission.ErrUnknownEvent
	}
	if err := rec.set(&all[i]); err != nil {
		return err
	}
	if _, err := e.r.engine.Apply(all); err != nil {
		if errors.Is(err, admission.ErrLiveChange) {
			return ErrEventTimesPassed
		}
		return err
	}
	e.api[id] = true
	return nil
}

func (e *rigEvents) Delete(_ context.Context, id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if id == "show" || id == "other" {
		return ErrFileEvent
	}
	if !e.api[id] {
		return admission.ErrUnknownEvent
	}
	all := slices.DeleteFunc(e.configs(), func(c admission.EventConfig) bool { return c.ID == id })
	if _, err := e.r.engine.Apply(all); err != nil {
		return err
	}
	delete(e.api, id)
	return e.reproxy()
}

// TestAdminEvents: the lifecycle's statuses and bodies: 201 with the
// event as GET shows it, 409 for a taken id, a file event's deletion
// and a running queue's new times, 422 with every problem, 400 for what
// is not a record, 404 for an unknown event; nothing changes on an
// error.
func TestAdminEvents(t *testing.T) {
	r := newRig(t)
	h, err := r.p.Admin(adminOptions(r))
	if err != nil {
		t.Fatal(err)
	}
	base := serveAdmin(t, h)
	r.tick(t, time.Second)
	ev := base + "/admin/v1/events"

	code, got := adminDo(t, "POST", ev, adminToken, `{"event":{"id":"encore","on_sale_at":"2030-06-01T10:00:00Z","caps":{"max_active":7}}}`)
	if code != 201 || got["id"] != "encore" || got["config_origin"] != "api" || got["on_sale_at"] != "2030-06-01T10:00:00Z" {
		t.Fatalf("POST: %d %v", code, got)
	}
	if caps, _ := got["caps"].(map[string]any); caps["max_active"] != 7.0 {
		t.Fatalf("POST: caps %v", got["caps"])
	}
	code, shown := adminDo(t, "GET", ev+"/encore", adminToken, "")
	if code != 200 || shown["config_origin"] != "api" || shown["id"] != "encore" {
		t.Fatalf("GET after POST: %d %v", code, shown)
	}
	for _, c := range []struct {
		method, url, body string
		status            int
		code              string
	}{
		{"POST", ev, `{"event":{"id":"encore"}}`, 409, "event_exists"},
		{"POST", ev, `{"event":{"id":"x"}`, 400, "bad_request"},
		{"POST", ev, `[{"event":{"id":"x"}}]`, 400, "bad_request"},
		{"POST", ev, `{"event":{"id":"x"},"colour":"red"}`, 400, "bad_request"},
		{"POST", ev, `{"event":{"id":"x","caps":{"max_active":0}}}`, 422, "invalid_event"},
		{"POST", ev, `{"event":{}}`, 422, "invalid_event"},
		{"PATCH", ev + "/nosuch", `{"event":{"caps":{"max_active":3}}}`, 404, "unknown_event"},
		{"PATCH", ev + "/encore", `{"event":{"caps":{"max_active":-1}}}`, 422, "invalid_event"},
		// show's queue opened an hour ago.
		{"PATCH", ev + "/show", `{"event":{"queue_opens_at":"` + t0.Add(-2*time.Hour).Format(time.RFC3339) + `"}}`, 409, "event_running"},
		{"DELETE", ev + "/show", ``, 409, "file_event"},
		{"DELETE", ev + "/nosuch", ``, 404, "unknown_event"},
	} {
		code, got := adminDo(t, c.method, c.url, adminToken, c.body)
		if code != c.status || got["error"] != c.code {
			t.Errorf("%s %s %s: %d %v, want %d %s", c.method, c.url, c.body, code, got, c.status, c.code)
		}
		if c.status == 422 {
			if ps, _ := got["problems"].([]any); len(ps) == 0 {
				t.Errorf("%s %s: no problems in %v", c.method, c.body, got)
			}
		}
	}
	// Nothing changed by the errors.
	if code, again := adminDo(t, "GET", ev+"/encore", adminToken, ""); code != 200 || again["caps"].(map[string]any)["max_active"] != 7.0 {
		t.Fatalf("after the refused changes: %d %v", code, again)
	}
	if code, show := adminDo(t, "GET", ev+"/show", adminToken, ""); code != 200 || show["config_origin"] != "file" ||
		show["queue_opens_at"] != t0.Add(-time.Hour).UTC().Format(time.RFC3339) {
		t.Fatalf("show after the refused changes: %d %v", code, show)
	}

	code, got = adminDo(t, "PATCH", ev+"/encore", adminToken, `{"event":{"caps":{"max_active":9}}}`)
	if code != 200 || got["caps"].(map[string]any)["max_active"] != 9.0 || got["config_origin"] != "api" {
		t.Fatalf("PATCH: %d %v", code, got)
	}
	code, got = adminDo(t, "DELETE", ev+"/encore", adminToken, "")
	if code != 200 || got["id"] != "encore" || got["deleted"] != true {
		t.Fatalf("DELETE: %d %v", code, got)
	}
	if code, _ := adminDo(t, "GET", ev+"/encore", adminToken, ""); code != 404 {
		t.Fatalf("GET after DELETE: %d", code)
	}
	// Without the token, nothing.
	if code, _ := adminDo(t, "POST", ev, "", `{"event":{"id":"y"}}`); code != 401 {
		t.Fatalf("POST without a token: %d", code)
	}
	if strings.Contains(strings.Join(r.engine.Events(), ","), "y") {
		t.Fatal("an event made without the token")
	}
}
