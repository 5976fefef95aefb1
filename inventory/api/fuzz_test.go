package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/api"
)

// Each fuzz target drives Handler directly (no network) over a real
// memstore whose clock stands still, so that only requests change state.
// For every input it checks: no panic (a recovered one would be a 500);
// no 5xx at all; a 4xx is a JSON {error, message}; a JSON 2xx is valid
// JSON; and a 4xx changed nothing (definition, counts, audit stream).

// fuzzEnv is the server and the records a target aims at.
type fuzzEnv struct {
	*fixture
	hold  string // a live hold
	order string // a confirmed order
}

func newFuzzEnv(f *testing.F) *fuzzEnv {
	fx := newFixture(f, api.Options{MaxBodyBytes: 64 << 10})
	h, err := fx.store.Hold(bg, fx.event, inventory.HoldRequest{User: "fuzz", Seats: []string{"C-1-5"}})
	if err != nil {
		f.Fatal(err)
	}
	sold, err := fx.store.Hold(bg, fx.event, inventory.HoldRequest{User: "fuzz", Seats: []string{"C-1-4"}})
	if err != nil {
		f.Fatal(err)
	}
	o, err := fx.store.Confirm(bg, fx.event, sold.ID, inventory.ConfirmRequest{})
	if err != nil {
		f.Fatal(err)
	}
	return &fuzzEnv{fixture: fx, hold: h.ID, order: o.ID}
}

// check runs r and applies the invariants; what names the input.
func (e *fuzzEnv) check(t *testing.T, r req, what string) *fasthttp.Response {
	t.Helper()
	before := e.state(t, e.event)
	resp := e.do(r)
	status := resp.StatusCode()
	switch {
	case status >= 500:
		t.Fatalf("%s: %d %s", what, status, resp.Body())
	case status >= 400:
		var body struct {
			Error   *string `json:"error"`
			Message *string `json:"message"`
		}
		if err := json.Unmarshal(resp.Body(), &body); err != nil || body.Error == nil || *body.Error == "" || body.Message == nil {
			t.Fatalf("%s: %d answer is not JSON {error, message}: %q (%v)", what, status, resp.Body(), err)
		}
		e.unchanged(t, e.event, before, what)
	case status >= 200:
		if strings.HasPrefix(string(resp.Header.ContentType()), "application/json") && !json.Valid(resp.Body()) {
			t.Fatalf("%s: %d answer is not JSON: %q", what, status, resp.Body())
		}
	default:
		t.Fatalf("%s: unexpected status %d", what, status)
	}
	return resp
}

func FuzzHoldBody(f *testing.F) {
	e := newFuzzEnv(f)
	for _, seed := range []string{
		`{"user":"u1","seats":["A-1-1","A-1-2"]}`,
		`{"user":"u1","best":{"section":"A","quantity":2}}`,
		`{"user":"u1","best":{"tier":"gold","quantity":2}}`,
		`{"user":"u1","ga":{"pool":"floor","quantity":2}}`,
		`{"user":"u1","seats":["B-2-6"],"ttl_seconds":60}`,
		`{"user":"u1","seats":["B-2-5"],"ttl_ms":1500}`,
		`{"user":"u1","seats":["C-1-5"]}`,
		`{"user":"u1","seats":["Z-1-1"]}`,
		`{"user":"u1","best":{"section":"A","quantity":101}}`,
		`{"user":"u1","seats":["A-1-1"],"seat":"x"}`,
		`{"user":"u1","user":"u2"}`,
		`{"USER":"u1"}`,
		`{"user":"u1","seats":["A-1-1"]} trailing`,
		`{"user":"u1","ga":{"pool":"floor","quantity":1e9}}`,
		`{"user":"u1","seats":["A-1-1"],"ttl_seconds":9223372037}`,
		`{"user":"u1","seats":["A-1-1"],"ttl_ms":-1}`,
		`[]`, `null`, ``, `{`, `{"user":"\ud800"}`, "{\"user\":\"\xff\"}",
	} {
		f.Add(seed, "")
	}
	f.Add(`{"user":"u1","seats":["A-2-1"]}`, "key-1")
	f.Add(`{"user":"u1","seats":["A-2-1"]}`, "bad key")
	f.Fuzz(func(t *testing.T, body, key string) {
		r := req{method: "POST", uri: "/v1/events/" + e.event + "/holds", body: body}
		if key != "" {
			r.headers = []string{"Idempotency-Key", key}
		}
		e.check(t, r, "hold "+body)
	})
}

func FuzzEventBody(f *testing.F) {
	e := newFuzzEnv(f)
	for _, seed := range []string{
		`{"sections":[{"id":"A","tier":"gold","price_cents":15000,"rows":[{"id":"1","seats":20}]}],"ga":[{"id":"floor","capacity":5000,"price_cents":9000}],"limits":{"per_user":4},"hold_ttl_seconds":480}`,
		`{"ga":[{"id":"floor","capacity":10}]}`,
		`{"sections":[{"id":"C","rows":[{"id":"1","seats":3}]}]}`,
		`{"sections":[{"id":"A-1","rows":[{"id":"1","seats":1}]}]}`,
		`{"sections":[{"id":"A","rows":[{"id":"1","seats":1001}]}]}`,
		`{"sections":[],"ga":[]}`,
		`{"ga":[{"id":"floor","capacity":10}],"hold_ttl_seconds":9223372037}`,
		`{"ga":[{"id":"floor","capacity":10}],"limits":{"per_user":-1}}`,
		`{"ga":[{"id":"floor","capacity":10,"capacity":11}]}`,
		`{"ga":[{"id":"floor","capacity":10}],"extra":1}`,
		`{}`, `[]`, ``, `{"sections":null}`, `{"sections":[{"rows":[{"seats":1e400}]}]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		e.check(t, req{method: "PUT", uri: "/v1/events/" + e.event, body: body}, "event "+body)
	})
}

func FuzzConfirmBody(f *testing.F) {
	e := newFuzzEnv(f)
	for _, seed := range []string{
		``, `{}`, `{"payment_ref":"pay_1"}`, `{"payment_ref":""}`,
		`{"payment_ref":1}`, `{"payment_ref":"a","payment_ref":"b"}`, `{"payment_ref":"p\u0000"}`,
		`{"payment":"x"}`, `{}x`, `[]`, `null`, `{"payment_ref":"` + strings.Repeat("p", 256) + `"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		e.check(t, req{method: "POST", uri: "/v1/events/" + e.event + "/holds/" + e.hold + "/confirm", body: body}, "confirm "+body)
	})
}

func FuzzExtendBody(f *testing.F) {
	e := newFuzzEnv(f)
	for _, seed := range []string{
		``, `{}`, `{"ttl_seconds":60}`, `{"ttl_ms":1500}`, `{"ttl_seconds":0}`, `{"ttl_seconds":-1}`,
		`{"ttl_seconds":86401}`, `{"ttl_seconds":5,"ttl_ms":5}`, `{"ttl_seconds":null}`, `{"TTL_seconds":5}`,
		`{"ttl_seconds":1e3}`, `{"ttl_seconds":99999999999999999999}`, `{}x`, `[]`, `null`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		e.check(t, req{method: "POST", uri: "/v1/events/" + e.event + "/holds/" + e.hold + "/extend", body: body}, "extend "+body)
	})
}

func FuzzCancelBody(f *testing.F) {
	e := newFuzzEnv(f)
	for _, seed := range []string{
		``, `{}`, `{"reason":"refund"}`, `{"reason":""}`, `{"reason":false}`,
		`{"reason":"a","reason":"b"}`, `{"Reason":"x"}`, `{"reason":"r"} {}`, `"r"`, `{"reason":"\u0007"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		e.check(t, req{method: "POST", uri: "/v1/events/" + e.event + "/orders/" + e.order + "/cancel", body: body}, "cancel "+body)
	})
}

// FuzzPath fuzzes the router and the path parameter parsing: any method,
// any request target.
func FuzzPath(f *testing.F) {
	e := newFuzzEnv(f)
	ev := "/v1/events/" + e.event
	for _, seed := range [][2]string{
		{"GET", "/healthz"}, {"GET", "/readyz"}, {"GET", "/metrics"}, {"GET", "/v1/openapi.yaml"},
		{"GET", "/v1/events"}, {"GET", ev}, {"GET", ev + "/availability"}, {"GET", ev + "/seats?section=A"},
		{"GET", ev + "/holds/" + e.hold}, {"GET", ev + "/orders/" + e.order}, {"GET", ev + "/audit?limit=2"},
		{"DELETE", ev + "/holds/hld_nope"}, {"POST", ev + "/orders/ord_nope/cancel"}, {"POST", ev + "/holds/hld_nope/confirm"},
		{"GET", "/v1/events/%2E%2E/availability"}, {"GET", "/v1/events/a%2Fb"}, {"GET", "/v1/events/%zz"},
		{"GET", "//v1//events"}, {"GET", "/v1/events/" + strings.Repeat("x", 70)}, {"BREW", "/healthz"},
		{"GET", "http://example.com/v1/events"}, {"GET", "*"}, {"GET", ""}, {"GET", "/v1/events/ev/holds/../x"},
		{"PUT", "/v1/events/new-event"}, {"GET", "/a/b/c/d/e/f/g/h/i"}, {"GET", "/v1/events/\x00"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, method, target string) {
		if method == "" {
			method = "GET"
		}
		e.check(t, req{method: method, uri: target}, method+" "+target)
	})
}

func FuzzAuditQuery(f *testing.F) {
	e := newFuzzEnv(f)
	for _, seed := range []string{
		"", "limit=1", "limit=1000", "limit=1001", "limit=0", "limit=-1", "limit=abc", "limit=1&limit=2",
		"after=", "after=0", "after=12", "after=not-a-cursor", "after=99999999999999999999", "after=%00",
		"after=1&limit=5", "x=1", "after=" + strings.Repeat("9", 200), "limit=%31", "limit", "&&&", "after=-1",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, query string) {
		resp := e.check(t, req{method: "GET", uri: "/v1/events/" + e.event + "/audit?" + query}, "audit ?"+query)
		if resp.StatusCode() == 200 {
			var p inventory.AuditPage
			if err := json.Unmarshal(resp.Body(), &p); err != nil || p.Event != e.event || p.Entries == nil {
				t.Fatalf("audit ?%s: page %q (%v)", query, resp.Body(), err)
			}
		}
	})
}
