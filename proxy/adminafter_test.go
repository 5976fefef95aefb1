package proxy

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAdminAnswersAfterChange: every operator action answers with the
// event as it is after the change, in snake_case, and a second GET
// agrees; caps changes say when they bind (the controller's next tick,
// within a tick interval of 1 s).
func TestAdminAnswersAfterChange(t *testing.T) {
	r := newRig(t)
	base := startAdmin(t, r)
	r.tick(t, 20*time.Second) // selling
	ev := base + "/admin/v1/events/show/"
	for _, c := range []struct {
		method, verb, body string
		state, mode        string
		control            map[string]any
	}{
		{"POST", "pause", "", "paused", "always", map[string]any{"paused": true}},
		{"POST", "resume", "", "selling", "always", map[string]any{}},
		{"POST", "sold-out", "", "sold_out", "always", map[string]any{"sold_out": true}},
		{"POST", "on-sale", "", "selling", "always", map[string]any{}},
		{"POST", "maintenance", "", "maintenance", "always", map[string]any{"maintenance": true}},
		{"POST", "passthrough", "", "passthrough", "always", map[string]any{"passthrough": true}},
		{"POST", "end-passthrough", "", "selling", "always", map[string]any{}},
		{"PUT", "mode", `{"mode":"threshold"}`, "selling", "threshold", map[string]any{"mode": "threshold"}},
		{"DELETE", "mode", "", "selling", "always", map[string]any{}},
		{"PUT", "caps", `{"max_active":7,"max_new_per_minute":120}`, "selling", "always",
			map[string]any{"caps": map[string]any{"max_active": 7.0, "max_new_per_minute": 120.0}}},
		{"DELETE", "caps", "", "selling", "always", map[string]any{}},
		{"POST", "close", "", "closed", "always", map[string]any{"closed": true}},
		{"POST", "reopen", "", "selling", "always", map[string]any{}},
	} {
		code, got := adminDo(t, c.method, ev+c.verb, adminToken, c.body)
		if code != 200 || got["state"] != c.state || got["mode"] != c.mode {
			t.Fatalf("%s %s: %d state %v mode %v, want %s %s", c.method, c.verb, code, got["state"], got["mode"], c.state, c.mode)
		}
		ctl, _ := got["control"].(map[string]any)
		if !equalJSON(ctl, c.control) {
			t.Fatalf("%s %s: control %v, want %v", c.method, c.verb, ctl, c.control)
		}
		checkSnake(t, c.verb, got)
		// What a GET says now is what the answer said.
		_, again := adminDo(t, "GET", base+"/admin/v1/events/show", adminToken, "")
		for _, k := range []string{"state", "mode", "control", "caps", "queueing"} {
			a, b := again[k], got[k]
			if k == "caps" { // the answer adds when caps bind
				a, b = withoutKey(a, "effective_at"), withoutKey(b, "effective_at")
			}
			if !equalJSON(a, b) {
				t.Fatalf("%s %s: answer's %s %v, GET's %v", c.method, c.verb, k, b, a)
			}
		}
		caps := got["caps"].(map[string]any)
		at, has := caps["effective_at"].(string)
		if has != (c.verb == "caps") {
			t.Fatalf("%s %s: effective_at %v", c.method, c.verb, caps["effective_at"])
		}
		if has {
			when, err := time.Parse(time.RFC3339, at)
			// The rig ticked at t0+20s; the next tick is due one
			// interval (1 s) after it, and the answer says so.
			if err != nil || !when.Equal(t0.Add(21*time.Second)) {
				t.Fatalf("caps effective_at %q, want %v", at, t0.Add(21*time.Second))
			}
			if caps["max_active"] != 7.0 && c.method == "PUT" {
				t.Fatalf("caps in force %v", caps)
			}
		}
	}
	// Once the tick is overdue, the caps bind at the next one, which
	// runs as soon as it can: effective_at is now.
	r.clk.Set(t0.Add(25 * time.Second))
	_, got := adminDo(t, "PUT", ev+"caps", adminToken, `{"max_active":5,"max_new_per_minute":0}`)
	if at := got["caps"].(map[string]any)["effective_at"]; at != t0.Add(25*time.Second).Format(time.RFC3339) {
		t.Fatalf("effective_at with a tick overdue: %v", at)
	}
	// And at that tick the controller's limit obeys them.
	r.tick(t, 25*time.Second)
	_, got = adminDo(t, "GET", base+"/admin/v1/events/show", adminToken, "")
	if got["limit"].(float64) > 5 {
		t.Fatalf("limit %v after the tick, above max_active 5", got["limit"])
	}
}

// checkSnake fails on any JSON key of v (at any depth) that is not
// snake_case (lanes are keyed by their names, which are config values).
func checkSnake(t *testing.T, where string, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k != strings.ToLower(k) || strings.ContainsAny(k, " -") {
				t.Fatalf("%s: key %q is not snake_case", where, k)
			}
			if k != "lanes" {
				checkSnake(t, where, x)
			}
		}
	case []any:
		for _, x := range v {
			checkSnake(t, where, x)
		}
	}
}

func withoutKey(v any, key string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	m = maps.Clone(m)
	delete(m, key)
	return m
}

func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) || !slices.Equal(slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(bm))) {
			return false
		}
		for k := range a {
			if !equalJSON(a[k], bm[k]) {
				return false
			}
		}
		return true
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			return false
		}
		for i := range a {
			if !equalJSON(a[i], bs[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

// TestAdminConfigOrigin: GET says where each event's configuration comes
// from: the file unless AdminOptions.Origin says otherwise.
func TestAdminConfigOrigin(t *testing.T) {
	r := newRig(t)
	base := startAdmin(t, r)
	if _, ev := adminDo(t, "GET", base+"/admin/v1/events/show", adminToken, ""); ev["config_origin"] != "file" {
		t.Fatalf("config_origin without an Origin func: %v", ev["config_origin"])
	}
	opts := adminOptions(r)
	opts.Origin = func(id string) string {
		if id == "other" {
			return "api"
		}
		return "file"
	}
	h, err := r.p.Admin(opts)
	if err != nil {
		t.Fatal(err)
	}
	base = serveAdmin(t, h)
	_, list := adminDo(t, "GET", base+"/admin/v1/events", adminToken, "")
	got := map[string]any{}
	for _, e := range list["events"].([]any) {
		m := e.(map[string]any)
		got[m["id"].(string)] = m["config_origin"]
	}
	if got["other"] != "api" || got["show"] != "file" {
		t.Fatalf("config_origin by event: %v", got)
	}
}
