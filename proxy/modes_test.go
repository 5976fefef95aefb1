package proxy

import (
	"strings"
	"testing"
	"time"
)

// TestModesThroughTheGate: an operator switches the event to threshold
// mode; a visitor without a pass goes straight to the origin in one
// response (a pass set on the origin's answer); once the granted slots
// are gone the next one gets the room; maintenance answers 503 (page or
// JSON) to everyone on gated paths; passthrough lets everyone in.
func TestModesThroughTheGate(t *testing.T) {
	r := newRig(t, withLimiter(100, 100))
	base := startAdmin(t, r)
	adminPath := base + "/admin/v1/events/show"

	for _, bad := range []string{`{"mode":"sideways"}`, `{"mode":""}`, `{}`, `{"mode":"threshold","x":1}`, `{"mode":1}`} {
		if code, e := adminDo(t, "PUT", adminPath+"/mode", adminToken, bad); code != 400 || e["error"] != "bad_request" {
			t.Errorf("mode %s: %d %v", bad, code, e)
		}
	}
	if code, _ := adminDo(t, "PUT", base+"/admin/v1/events/nope/mode", adminToken, `{"mode":"threshold"}`); code != 404 {
		t.Errorf("mode of an unknown event: %d", code)
	}
	code, ev := adminDo(t, "PUT", adminPath+"/mode", adminToken, `{"mode":"threshold"}`)
	if code != 200 || ev["mode"] != "threshold" || ev["configured_mode"] != "always" || ev["control"].(map[string]any)["mode"] != "threshold" {
		t.Fatalf("switch to threshold: %d %v", code, ev)
	}
	// Two slots a tick at most.
	if code, _ := adminDo(t, "PUT", adminPath+"/caps", adminToken, `{"max_active":2,"max_new_per_minute":0}`); code != 200 {
		t.Fatal("caps")
	}
	r.tick(t, 11*time.Second) // on sale: the leader grants the slots

	// Straight through: the origin answers the very first request, with
	// the new pass set on its answer; the next request uses the pass.
	v := newVisitor(t, "Mozilla/5.0 first")
	got := v.do(t, "GET", r.url+"/show/seats", "")
	if got.status != 200 || got.body != "origin:/show/seats" || v.cookie(r.url, "wr_pass_show") == "" {
		t.Fatalf("straight through: %d %q, pass %q", got.status, got.body, v.cookie(r.url, "wr_pass_show"))
	}
	if seen := r.origin.last(t); seen.visitor == "" || seen.event != "show" || strings.Contains(seen.cookie, "wr_pass") {
		t.Fatalf("the origin saw %+v", seen)
	}
	if got := v.do(t, "GET", r.url+"/show/more", ""); got.body != "origin:/show/more" {
		t.Fatalf("with the pass: %q", got.body)
	}
	// A pass-only path stays closed to anyone without a pass.
	if got := newVisitor(t, "Mozilla/5.0 block").do(t, "GET", r.url+"/checkout/", ""); got.status != 403 {
		t.Fatalf("blocked path without a pass: %d", got.status)
	}
	// The join lets in at once too, on to where the visitor was going.
	w := newVisitor(t, "Mozilla/5.0 joiner")
	st := decodeStatus(t, w.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show","return":"/show/y"}`))
	if st.Status != "admitted" || st.Redirect == nil || *st.Redirect != "/show/y" || w.cookie(r.url, "wr_pass_show") == "" {
		t.Fatalf("join with a slot: %+v", st)
	}
	// The slots are gone: the room.
	x := newVisitor(t, "Mozilla/5.0 third")
	if got := x.do(t, "GET", r.url+"/show/seats", ""); got.status != 200 || !strings.Contains(got.body, "The Show") ||
		x.cookie(r.url, "wr_pass_show") != "" {
		t.Fatalf("after the slots: %d %.80q", got.status, got.body)
	}
	if n := counterValue(t, r.reg, "waitroom_requests_total", map[string]string{"action": "queue", "outcome": "passed"}); n != 1 {
		t.Fatalf("passed requests: %v", n)
	}

	// Maintenance: everyone on gated paths, pass or not, gets the page.
	// The answer is the state after the change, before any tick.
	if code, ev = adminDo(t, "POST", adminPath+"/maintenance", adminToken, ""); code != 200 ||
		ev["control"].(map[string]any)["maintenance"] != true || ev["state"] != "maintenance" || ev["queueing"] != true {
		t.Fatalf("maintenance: %d %v", code, ev)
	}
	for _, who := range []*visitor{v, x} {
		got := who.do(t, "GET", r.url+"/show/seats", "", "Accept-Language", "de")
		if got.status != 503 || got.header.Get("Retry-After") != "60" || !strings.Contains(got.body, "Gleich wieder da") {
			t.Fatalf("maintenance page: %d %q %.100q", got.status, got.header.Get("Retry-After"), got.body)
		}
	}
	if got := x.do(t, "GET", r.url+"/show/seats", "", "Accept", "application/json"); got.status != 503 || !strings.Contains(got.body, `"error":"maintenance"`) {
		t.Fatalf("maintenance JSON: %d %s", got.status, got.body)
	}
	if got := x.do(t, "GET", r.url+"/static/app.css", ""); got.body != "origin:/static/app.css" {
		t.Fatalf("a pass-through route in maintenance: %q", got.body)
	}
	if code, _ := adminDo(t, "POST", adminPath+"/end-maintenance", adminToken, ""); code != 200 {
		t.Fatal("end maintenance")
	}
	if got := v.do(t, "GET", r.url+"/show/seats", ""); got.body != "origin:/show/seats" {
		t.Fatalf("after maintenance: %q", got.body)
	}

	// Passthrough: everyone in, whatever the slots.
	code, ev = adminDo(t, "POST", adminPath+"/passthrough", adminToken, "")
	if code != 200 || ev["control"].(map[string]any)["passthrough"] != true || ev["control"].(map[string]any)["maintenance"] != nil ||
		ev["state"] != "passthrough" || ev["queueing"] != false {
		t.Fatalf("passthrough: %d %v", code, ev)
	}
	r.tick(t, 12*time.Second)
	if code, ev = adminDo(t, "GET", adminPath, adminToken, ""); code != 200 || ev["state"] != "passthrough" || ev["queueing"] != false {
		t.Fatalf("event in passthrough: %v", ev)
	}
	for i := range 5 {
		y := newVisitor(t, "Mozilla/5.0 crowd")
		if got := y.do(t, "GET", r.url+"/show/seats", ""); got.body != "origin:/show/seats" {
			t.Fatalf("visitor %d in passthrough: %d %.80q", i, got.status, got.body)
		}
	}
	if code, _ := adminDo(t, "POST", adminPath+"/end-passthrough", adminToken, ""); code != 200 {
		t.Fatal("end passthrough")
	}
	if code, ev = adminDo(t, "DELETE", adminPath+"/mode", adminToken, ""); code != 200 || ev["mode"] != "always" {
		t.Fatalf("mode reset: %d %v", code, ev)
	}
	if got := newVisitor(t, "Mozilla/5.0 late").do(t, "GET", r.url+"/show/seats", ""); !strings.Contains(got.body, "The Show") {
		t.Fatalf("back in always mode, straight through: %.80q", got.body)
	}
}

// TestThresholdRateLimited: a client that keeps no cookies would take a
// slot with every request; the API's per-address limit stops it, and it
// gets the room instead.
func TestThresholdRateLimited(t *testing.T) {
	r := newRig(t, withLimiter(0.001, 3))
	base := startAdmin(t, r)
	if code, _ := adminDo(t, "PUT", base+"/admin/v1/events/show/mode", adminToken, `{"mode":"threshold"}`); code != 200 {
		t.Fatal("mode")
	}
	r.tick(t, 11*time.Second)
	through := 0
	for range 10 {
		if got := newVisitor(t, "curl").do(t, "GET", r.url+"/show/seats", ""); got.body == "origin:/show/seats" {
			through++
		}
	}
	if through != 3 {
		t.Fatalf("%d of 10 cookie-less requests from one address went through, want the limiter's burst of 3", through)
	}
}
