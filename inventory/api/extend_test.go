package api_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/waitroom/waitroom/inventory/api"
)

func TestExtendEndpoint(t *testing.T) {
	f := newFixture(t, api.Options{})
	ev := "/v1/events/" + f.event
	hold := func() (id string, exp time.Time) {
		t.Helper()
		resp := f.do(req{method: "POST", uri: ev + "/holds", body: `{"user":"u1","ga":{"pool":"floor","quantity":1},"ttl_seconds":60}`})
		var h struct {
			ID  string    `json:"hold_id"`
			Exp time.Time `json:"expires_at"`
		}
		if resp.StatusCode() != 201 || json.Unmarshal(resp.Body(), &h) != nil {
			t.Fatalf("hold: %d %s", resp.StatusCode(), resp.Body())
		}
		return h.ID, h.Exp
	}
	id, exp := hold()
	extend := func(body string, headers ...string) (int, map[string]any) {
		t.Helper()
		resp := f.do(req{method: "POST", uri: ev + "/holds/" + id + "/extend", body: body, headers: headers})
		var m map[string]any
		if err := json.Unmarshal(resp.Body(), &m); err != nil {
			t.Fatalf("extend %s: %d %s", body, resp.StatusCode(), resp.Body())
		}
		return resp.StatusCode(), m
	}
	code, m := extend(`{"ttl_seconds":300}`)
	got, _ := time.Parse(time.RFC3339Nano, m["expires_at"].(string))
	if code != 200 || m["hold_id"] != id || m["status"] != "held" || !got.After(exp) {
		t.Fatalf("extend: %d %v (was %v)", code, m, exp)
	}
	if code, _ := extend(""); code != 200 {
		t.Fatalf("an empty extend body: %d", code)
	}
	before := f.state(t, f.event)
	for _, body := range []string{
		`{"ttl_seconds":0}`, `{"ttl_seconds":-1}`, `{"ttl_seconds":86401}`, `{"ttl_ms":0}`,
		`{"ttl_seconds":5,"ttl_ms":5000}`, `{"ttl":5}`, `{"ttl_seconds":"5"}`, `{"ttl_seconds":1.5}`,
		`[]`, `{}x`, `{"ttl_seconds":5,"ttl_seconds":6}`,
	} {
		if code, m := extend(body); code != 400 || m["error"] == nil || m["message"] == nil {
			t.Errorf("extend %s: %d %v, want a 400", body, code, m)
		}
	}
	f.unchanged(t, f.event, before, "bad extend bodies")

	// A key replays; the same key for another TTL is refused.
	code1, m1 := extend(`{"ttl_seconds":120}`, "Idempotency-Key", "ext-1")
	code2, m2 := extend(`{"ttl_seconds":120}`, "Idempotency-Key", "ext-1")
	if code1 != 200 || code2 != 200 || m1["expires_at"] != m2["expires_at"] {
		t.Fatalf("replay: %d %v, then %d %v", code1, m1, code2, m2)
	}
	if code, m := extend(`{"ttl_seconds":121}`, "Idempotency-Key", "ext-1"); code != 422 || m["error"] != "idempotency_mismatch" {
		t.Fatalf("a key reused for another extend: %d %v", code, m)
	}

	// Released, confirmed and unknown holds.
	if resp := f.do(req{method: "DELETE", uri: ev + "/holds/" + id}); resp.StatusCode() != 200 {
		t.Fatalf("release: %d", resp.StatusCode())
	}
	if code, m := extend(`{}`); code != 409 || m["error"] != "hold_released" {
		t.Fatalf("extend a released hold: %d %v", code, m)
	}
	id, _ = hold()
	if resp := f.do(req{method: "POST", uri: ev + "/holds/" + id + "/confirm"}); resp.StatusCode() != 200 {
		t.Fatalf("confirm: %d", resp.StatusCode())
	}
	if code, m := extend(`{}`); code != 409 || m["error"] != "hold_confirmed" {
		t.Fatalf("extend a confirmed hold: %d %v", code, m)
	}
	id = "hld_nope"
	if code, m := extend(`{}`); code != 404 || m["error"] != "hold_not_found" {
		t.Fatalf("extend an unknown hold: %d %v", code, m)
	}
	if resp := f.do(req{method: "GET", uri: ev + "/holds/x/extend"}); resp.StatusCode() != 405 {
		t.Fatalf("GET extend: %d", resp.StatusCode())
	}
}
