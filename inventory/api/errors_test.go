// Tests of the error answers: every inventory sentinel's status and code,
// what the HTTP layer refuses by itself, malformed bodies and path
// parameters (which change nothing), and an expired hold's 410.

package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/api"
	"github.com/waitroom/waitroom/inventory/memstore"
)

// TestErrorStatus maps every sentinel of inventory/errors.go through the
// API and checks status, code and details.
func TestErrorStatus(t *testing.T) {
	tests := []struct {
		err    error
		status int
		code   string
		check  func(t *testing.T, e errorBody)
	}{
		{inventory.Errorf(inventory.ErrInvalid, "user: must be 1-128 characters"), 400, "invalid_request", nil},
		{inventory.ErrEventNotFound, 404, "event_not_found", nil},
		{inventory.ErrSectionNotFound, 404, "section_not_found", nil},
		{inventory.ErrTierNotFound, 404, "tier_not_found", nil},
		{inventory.ErrPoolNotFound, 404, "pool_not_found", nil},
		{&inventory.Error{Kind: inventory.ErrSeatNotFound, Seats: []string{"Z-1-1", "A-9-1"}}, 404, "seat_not_found",
			func(t *testing.T, e errorBody) {
				if !slices.Equal(e.Unknown, []string{"Z-1-1", "A-9-1"}) {
					t.Fatalf("unknown = %v", e.Unknown)
				}
			}},
		{inventory.ErrHoldNotFound, 404, "hold_not_found", nil},
		{inventory.ErrOrderNotFound, 404, "order_not_found", nil},
		{&inventory.Error{Kind: inventory.ErrSeatUnavailable, Seats: []string{"A-1-2", "A-1-4"}, Message: "seats are held or sold"}, 409, "seat_unavailable",
			func(t *testing.T, e errorBody) {
				if !slices.Equal(e.Unavailable, []string{"A-1-2", "A-1-4"}) || e.Message != "seats are held or sold" {
					t.Fatalf("body = %+v", e)
				}
			}},
		{inventory.ErrSoldOut, 409, "sold_out", nil},
		{&inventory.Error{Kind: inventory.ErrNotEnoughSeats, Available: 3}, 409, "not_enough_seats",
			func(t *testing.T, e errorBody) {
				if e.Available == nil || *e.Available != 3 {
					t.Fatalf("available = %v", e.Available)
				}
			}},
		{&inventory.Error{Kind: inventory.ErrUserLimit, Limit: 4, Current: 3}, 422, "user_limit",
			func(t *testing.T, e errorBody) {
				if e.Limit == nil || *e.Limit != 4 || e.Current == nil || *e.Current != 3 {
					t.Fatalf("limit/current = %v/%v", e.Limit, e.Current)
				}
			}},
		{inventory.ErrHoldExpired, 410, "hold_expired", nil},
		{inventory.ErrHoldReleased, 409, "hold_released", nil},
		{inventory.ErrHoldConfirmed, 409, "hold_confirmed", nil},
		{inventory.ErrOrderCancelled, 409, "order_cancelled", nil},
		{inventory.ErrIdempotencyMismatch, 422, "idempotency_mismatch", nil},
		{&inventory.Error{Kind: inventory.ErrDefinitionConflict, Seats: []string{"A-3-10"}, Pools: []string{"floor"}}, 409, "definition_conflict",
			func(t *testing.T, e errorBody) {
				if !slices.Equal(e.Unavailable, []string{"A-3-10"}) || !slices.Equal(e.Pools, []string{"floor"}) {
					t.Fatalf("body = %+v", e)
				}
			}},
		{&inventory.Error{Kind: inventory.ErrDefinitionConflict, Pools: []string{"floor"}}, 409, "definition_conflict",
			func(t *testing.T, e errorBody) {
				if e.Unavailable == nil || len(e.Unavailable) != 0 {
					t.Fatalf("unavailable should be [] when only pools block: %+v", e)
				}
			}},
		// Storage failures: logged, never shown.
		{&inventory.Error{Kind: inventory.ErrUnavailable, Message: "journal /var/lib/secret: EIO"}, 503, "unavailable", nil},
		{inventory.ErrUnavailable, 503, "unavailable", nil},
		{fmt.Errorf("dial tcp 10.1.2.3:6379: %w", inventory.ErrUnavailable), 503, "unavailable", nil},
		{errors.New("open /var/lib/secret/journal: permission denied"), 503, "unavailable", nil},
		{context.DeadlineExceeded, 503, "unavailable", nil},
		// A wrapped sentinel shows the sentinel's text, not the wrapper's.
		{fmt.Errorf("lua script sha 1234 at 10.1.2.3: %w", inventory.ErrSoldOut), 409, "sold_out", nil},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		seen[tc.code] = true
		t.Run(tc.code, func(t *testing.T) {
			logs := &syncBuffer{}
			reg := prometheus.NewRegistry()
			srv, err := api.New(&stubStore{err: tc.err}, api.Options{Token: token, Registry: reg, Logger: slog.New(slog.NewTextHandler(logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			resp := serve(srv, req{method: "POST", uri: "/v1/events/ev1/holds", body: `{"user":"u1","seats":["A-1-1"]}`})
			if resp.StatusCode() != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode(), tc.status, resp.Body())
			}
			e := decodeError(t, resp)
			if e.Error != tc.code {
				t.Fatalf("code %q, want %q", e.Error, tc.code)
			}
			if tc.check != nil {
				tc.check(t, e)
			}
			body := string(resp.Body())
			for _, secret := range []string{"secret", "10.1.2.3", "lua", "EIO", "deadline"} {
				if strings.Contains(body, secret) {
					t.Fatalf("internal text %q reached the client: %s", secret, body)
				}
			}
			if tc.status == 503 {
				if e.Message != "the inventory store is unavailable" {
					t.Fatalf("message %q", e.Message)
				}
				if !strings.Contains(logs.String(), "store failure") || !strings.Contains(logs.String(), "err=") {
					t.Fatalf("storage failure not logged: %q", logs.String())
				}
				if !strings.Contains(gatherText(t, reg), `waitroom_inventory_store_failures_total{route="/v1/events/{event}/holds"} 1`) {
					t.Fatal("storage failure not counted")
				}
			} else if logs.String() != "" {
				t.Fatalf("a client error was logged: %q", logs.String())
			}
		})
	}
	// Every sentinel is covered.
	for _, s := range []error{inventory.ErrInvalid, inventory.ErrEventNotFound, inventory.ErrSectionNotFound, inventory.ErrTierNotFound,
		inventory.ErrPoolNotFound, inventory.ErrSeatNotFound, inventory.ErrHoldNotFound, inventory.ErrOrderNotFound, inventory.ErrSeatUnavailable,
		inventory.ErrSoldOut, inventory.ErrNotEnoughSeats, inventory.ErrUserLimit, inventory.ErrHoldExpired, inventory.ErrHoldReleased,
		inventory.ErrHoldConfirmed, inventory.ErrOrderCancelled, inventory.ErrIdempotencyMismatch, inventory.ErrDefinitionConflict, inventory.ErrUnavailable} {
		if !seen[inventory.Code(s)] {
			t.Errorf("sentinel %v (%s) is not tested", s, inventory.Code(s))
		}
	}
}

func gatherText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			b.WriteString(mf.GetName() + "{")
			for i, l := range m.GetLabel() {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, "%s=%q", l.GetName(), l.GetValue())
			}
			fmt.Fprintf(&b, "} %v\n", m.GetCounter().GetValue())
		}
	}
	return b.String()
}

// TestHTTPLayerErrors covers the answers the HTTP layer gives by itself.
func TestHTTPLayerErrors(t *testing.T) {
	f := newFixture(t, api.Options{MaxBodyBytes: 1024})
	ev := "/v1/events/" + f.event
	tests := []struct {
		name   string
		r      req
		status int
		code   string
		allow  string
	}{
		{"unknown route", req{method: "GET", uri: "/v1/nothing/here"}, 404, "not_found", ""},
		{"root", req{method: "GET", uri: "/"}, 404, "not_found", ""},
		{"too deep", req{method: "GET", uri: "/a/b/c/d/e/f/g/h/i/j"}, 404, "not_found", ""},
		{"double slash", req{method: "GET", uri: "//v1/events"}, 404, "not_found", ""},
		{"v2", req{method: "GET", uri: "/v2/events"}, 404, "not_found", ""},
		{"POST healthz", req{method: "POST", uri: "/healthz"}, 405, "method_not_allowed", "GET"},
		{"DELETE event", req{method: "DELETE", uri: ev}, 405, "method_not_allowed", "GET, PUT"},
		{"PUT hold", req{method: "PUT", uri: ev + "/holds/hld_x"}, 405, "method_not_allowed", "GET, DELETE"},
		{"GET holds", req{method: "GET", uri: ev + "/holds"}, 405, "method_not_allowed", "POST"},
		{"GET confirm", req{method: "GET", uri: ev + "/holds/hld_x/confirm"}, 405, "method_not_allowed", "POST"},
		{"lower-case method", req{method: "get", uri: "/healthz"}, 405, "method_not_allowed", "GET"},
		{"too large", req{method: "POST", uri: ev + "/holds", body: `{"user":"` + strings.Repeat("u", 2000) + `"}`}, 413, "payload_too_large", ""},
		{"text/plain", req{method: "POST", uri: ev + "/holds", body: `{"user":"u1","seats":["A-1-1"]}`, ctype: "text/plain"}, 415, "unsupported_media_type", ""},
		{"form", req{method: "PUT", uri: ev, body: `{}`, ctype: "application/x-www-form-urlencoded"}, 415, "unsupported_media_type", ""},
		{"no content type", req{method: "POST", uri: ev + "/holds/hld_x/confirm", body: `{}`, ctype: "-"}, 415, "unsupported_media_type", ""},
		{"gzip", req{method: "POST", uri: ev + "/holds", body: `{"user":"u1","seats":["A-1-1"]}`, headers: []string{"Content-Encoding", "gzip"}}, 415, "unsupported_media_type", ""},
		{"json with charset is fine", req{method: "POST", uri: ev + "/holds/hld_nope/confirm", body: `{}`, ctype: "application/json; charset=utf-8"}, 404, "hold_not_found", ""},
		{"empty hold body", req{method: "POST", uri: ev + "/holds"}, 400, "invalid_request", ""},
		{"empty event body", req{method: "PUT", uri: ev}, 400, "invalid_request", ""},
		{"unknown query", req{method: "GET", uri: ev + "/availability?x=1"}, 400, "invalid_request", ""},
		{"seats without section", req{method: "GET", uri: ev + "/seats"}, 400, "invalid_request", ""},
		{"seats bad section", req{method: "GET", uri: ev + "/seats?section=A-1"}, 400, "invalid_request", ""},
		{"seats section twice", req{method: "GET", uri: ev + "/seats?section=A&section=B"}, 400, "invalid_request", ""},
		{"seats unknown section", req{method: "GET", uri: ev + "/seats?section=Q"}, 404, "section_not_found", ""},
		{"audit limit text", req{method: "GET", uri: ev + "/audit?limit=ten"}, 400, "invalid_request", ""},
		{"audit limit 0", req{method: "GET", uri: ev + "/audit?limit=0"}, 400, "invalid_request", ""},
		{"audit limit big", req{method: "GET", uri: ev + "/audit?limit=1001"}, 400, "invalid_request", ""},
		{"audit limit huge", req{method: "GET", uri: ev + "/audit?limit=99999999999999999999"}, 400, "invalid_request", ""},
		{"audit limit negative", req{method: "GET", uri: ev + "/audit?limit=-1"}, 400, "invalid_request", ""},
		{"audit limit twice", req{method: "GET", uri: ev + "/audit?limit=1&limit=2"}, 400, "invalid_request", ""},
		{"audit bad cursor", req{method: "GET", uri: ev + "/audit?after=not-a-cursor"}, 400, "invalid_request", ""},
		{"audit cursor with space", req{method: "GET", uri: ev + "/audit?after=1%202"}, 400, "invalid_request", ""},
		{"key twice", req{method: "POST", uri: ev + "/holds", body: `{"user":"u1","seats":["A-1-1"]}`, headers: []string{"Idempotency-Key", "a", "Idempotency-Key", "b"}}, 400, "invalid_request", ""},
		{"key with space", req{method: "POST", uri: ev + "/holds", body: `{"user":"u1","seats":["A-1-1"]}`, headers: []string{"Idempotency-Key", "a b"}}, 400, "invalid_request", ""},
		{"key too long", req{method: "DELETE", uri: ev + "/holds/hld_x", headers: []string{"Idempotency-Key", strings.Repeat("k", 256)}}, 400, "invalid_request", ""},
		{"actor too long", req{method: "POST", uri: ev + "/holds", body: `{"user":"u1","seats":["A-1-1"]}`, headers: []string{"X-Waitroom-Actor", strings.Repeat("a", 129)}}, 400, "invalid_request", ""},
		{"actor twice", req{method: "POST", uri: ev + "/orders/ord_x/cancel", headers: []string{"X-Waitroom-Actor", "a", "X-Waitroom-Actor", "b"}}, 400, "invalid_request", ""},
		{"unknown event", req{method: "GET", uri: "/v1/events/nope/availability"}, 404, "event_not_found", ""},
		{"unknown hold", req{method: "GET", uri: ev + "/holds/hld_nope"}, 404, "hold_not_found", ""},
		{"unknown order", req{method: "GET", uri: ev + "/orders/ord_nope"}, 404, "order_not_found", ""},
		{"cancel unknown order", req{method: "POST", uri: ev + "/orders/ord_nope/cancel"}, 404, "order_not_found", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := f.state(t, f.event)
			resp := f.do(tc.r)
			if resp.StatusCode() != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode(), tc.status, resp.Body())
			}
			if e := decodeError(t, resp); e.Error != tc.code {
				t.Fatalf("code %q, want %q (%s)", e.Error, tc.code, e.Message)
			}
			if got := string(resp.Header.Peek("Allow")); got != tc.allow {
				t.Fatalf("Allow = %q, want %q", got, tc.allow)
			}
			f.unchanged(t, f.event, before, tc.name)
		})
	}
}

// TestMalformedChangesNothing sends malformed bodies to every endpoint
// that takes one: each is a 400 and the store is unchanged.
func TestMalformedChangesNothing(t *testing.T) {
	f := newFixture(t, api.Options{})
	ev := "/v1/events/" + f.event
	h, err := f.store.Hold(bg, f.event, inventory.HoldRequest{User: "u0", Seats: []string{"B-1-1"}})
	if err != nil {
		t.Fatal(err)
	}
	sold, _ := f.store.Hold(bg, f.event, inventory.HoldRequest{User: "u0", Seats: []string{"B-1-2"}})
	o, err := f.store.Confirm(bg, f.event, sold.ID, inventory.ConfirmRequest{})
	if err != nil {
		t.Fatal(err)
	}
	holds := ev + "/holds"
	confirm := ev + "/holds/" + h.ID + "/confirm"
	cancel := ev + "/orders/" + o.ID + "/cancel"
	type target struct{ method, uri string }
	bodies := []struct {
		name string
		to   []target
		body string
	}{
		{"unknown field", []target{{"POST", holds}}, `{"user":"u1","seats":["A-1-1"],"seat":"A-1-2"}`},
		{"unknown field confirm", []target{{"POST", confirm}}, `{"payment_ref":"p","amount":5}`},
		{"unknown field cancel", []target{{"POST", cancel}}, `{"reason":"r","refund":true}`},
		{"unknown field event", []target{{"PUT", ev}}, `{"sections":[],"ga":[{"id":"floor","capacity":10,"price_cents":9000}],"seats":57}`},
		{"unknown nested field", []target{{"POST", holds}}, `{"user":"u1","best":{"section":"A","quantity":2,"near":"stage"}}`},
		{"case-folded key", []target{{"POST", holds}}, `{"USER":"u1","seats":["A-1-1"]}`},
		{"kelvin-sign key", []target{{"POST", holds}}, `{"user":"u1","seats":["A-1-1"],"ttl_seconds":5,"ttl_\u212as":1}`},
		{"long-s key", []target{{"POST", holds}}, "{\"u\u017fer\":\"u1\",\"seats\":[\"A-1-1\"]}"},
		{"duplicate key", []target{{"POST", holds}}, `{"user":"u1","user":"u2","seats":["A-1-1"]}`},
		{"duplicate key confirm", []target{{"POST", confirm}}, `{"payment_ref":"a","payment_ref":"b"}`},
		{"trailing garbage", []target{{"POST", holds}, {"POST", confirm}, {"POST", cancel}}, `{"user":"u1","seats":["A-1-1"]} x`},
		{"two objects", []target{{"POST", holds}, {"POST", confirm}, {"POST", cancel}, {"PUT", ev}}, `{}{}`},
		{"trailing brace", []target{{"POST", confirm}}, `{}}`},
		{"array", []target{{"POST", holds}, {"POST", confirm}, {"POST", cancel}, {"PUT", ev}}, `[]`},
		{"null", []target{{"POST", holds}, {"POST", confirm}, {"POST", cancel}, {"PUT", ev}}, `null`},
		{"string", []target{{"POST", holds}, {"POST", confirm}}, `"hold"`},
		{"number", []target{{"POST", holds}, {"POST", cancel}}, `42`},
		{"truncated", []target{{"POST", holds}, {"POST", confirm}, {"PUT", ev}}, `{"user":"u1","seats":["A-1-1"`},
		{"whitespace only", []target{{"POST", holds}, {"POST", confirm}, {"PUT", ev}}, "  \n\t "},
		{"wrong type user", []target{{"POST", holds}}, `{"user":1,"seats":["A-1-1"]}`},
		{"wrong type seats", []target{{"POST", holds}}, `{"user":"u1","seats":"A-1-1"}`},
		{"wrong type quantity", []target{{"POST", holds}}, `{"user":"u1","ga":{"pool":"floor","quantity":"2"}}`},
		{"float quantity", []target{{"POST", holds}}, `{"user":"u1","ga":{"pool":"floor","quantity":1.5}}`},
		{"exponent quantity", []target{{"POST", holds}}, `{"user":"u1","ga":{"pool":"floor","quantity":1e2}}`},
		{"huge quantity", []target{{"POST", holds}}, `{"user":"u1","ga":{"pool":"floor","quantity":99999999999999999999999}}`},
		{"huge ttl_seconds", []target{{"POST", holds}}, `{"user":"u1","seats":["A-1-1"],"ttl_seconds":9223372037}`},
		{"ttl_seconds overflowing int64", []target{{"POST", holds}}, `{"user":"u1","seats":["A-1-1"],"ttl_seconds":9223372036854775808}`},
		{"zero ttl_seconds", []target{{"POST", holds}}, `{"user":"u1","seats":["A-1-1"],"ttl_seconds":0}`},
		{"zero ttl_ms", []target{{"POST", holds}}, `{"user":"u1","seats":["A-1-1"],"ttl_ms":0}`},
		{"huge ttl_ms", []target{{"POST", holds}}, `{"user":"u1","seats":["A-1-1"],"ttl_ms":86400001}`},
		{"negative ttl_ms", []target{{"POST", holds}}, `{"user":"u1","seats":["A-1-1"],"ttl_ms":-5}`},
		{"huge hold_ttl_seconds", []target{{"PUT", ev}}, `{"ga":[{"id":"floor","capacity":10,"price_cents":9000}],"hold_ttl_seconds":9223372037}`},
		{"huge capacity", []target{{"PUT", ev}}, `{"ga":[{"id":"floor","capacity":1e400}]}`},
		{"huge price", []target{{"PUT", ev}}, `{"ga":[{"id":"floor","capacity":10,"price_cents":92233720368547758070}]}`},
		{"wrong type payment_ref", []target{{"POST", confirm}}, `{"payment_ref":12}`},
		{"wrong type reason", []target{{"POST", cancel}}, `{"reason":["r"]}`},
		{"invalid UTF-8", []target{{"POST", holds}, {"POST", confirm}, {"POST", cancel}}, "{\"user\":\"u\xff\",\"seats\":[\"A-1-1\"]}"},
		{"deep nesting", []target{{"POST", holds}, {"PUT", ev}}, `{"user":"u1","seats":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`},
		{"control character in user", []target{{"POST", holds}}, `{"user":"u\u0000","seats":["A-1-1"]}`},
		{"empty seats", []target{{"POST", holds}}, `{"user":"u1","seats":[]}`},
		{"no request kind", []target{{"POST", holds}}, `{"user":"u1"}`},
		{"two request kinds", []target{{"POST", holds}}, `{"user":"u1","seats":["A-1-1"],"ga":{"pool":"floor","quantity":1}}`},
		{"bad seat id", []target{{"POST", holds}}, `{"user":"u1","seats":["A-1-01"]}`},
		{"invalid definition", []target{{"PUT", ev}}, `{"sections":[{"id":"A-1","rows":[{"id":"1","seats":1}]}]}`},
		{"empty definition", []target{{"PUT", ev}}, `{}`},
		{"payment_ref with control character", []target{{"POST", confirm}}, `{"payment_ref":"p\u0007"}`},
		{"long reason", []target{{"POST", cancel}}, `{"reason":"` + strings.Repeat("r", 256) + `"}`},
	}
	for _, tc := range bodies {
		for _, to := range tc.to {
			t.Run(tc.name+" "+to.method+" "+to.uri[strings.LastIndexByte(to.uri, '/'):], func(t *testing.T) {
				before := f.state(t, f.event)
				resp := f.do(req{method: to.method, uri: to.uri, body: tc.body})
				if resp.StatusCode() != 400 {
					t.Fatalf("status %d, want 400: %s", resp.StatusCode(), resp.Body())
				}
				if e := decodeError(t, resp); e.Error != "invalid_request" {
					t.Fatalf("code %q", e.Error)
				}
				f.unchanged(t, f.event, before, tc.name)
			})
		}
	}
	// The same endpoints do work with good bodies.
	for _, r := range []req{
		{method: "POST", uri: confirm, body: `{"payment_ref":"pay_1"}`},
		{method: "POST", uri: cancel, body: `{"reason":"refund"}`},
		{method: "POST", uri: holds, body: `{"user":"u1","seats":["A-1-1"],"ttl_ms":1500}`},
	} {
		if resp := f.do(r); resp.StatusCode() >= 300 {
			t.Fatalf("%s %s: %d %s", r.method, r.uri, resp.StatusCode(), resp.Body())
		}
	}
}

func TestBadPathParams(t *testing.T) {
	f := newFixture(t, api.Options{})
	ev := "/v1/events/" + f.event
	for _, uri := range []string{
		"/v1/events/a%20b/availability",
		"/v1/events/..%2Fx/availability",
		"/v1/events/%2E%2E/availability",
		"/v1/events/%zz/availability",
		"/v1/events/%4/availability",
		"/v1/events/ev%/availability",
		"/v1/events/-x/availability",
		"/v1/events/x%7D",
		"/v1/events/%00/availability",
		"/v1/events/" + strings.Repeat("e", 65),
		"/v1/events/",
		"/v1/events//availability",
		"/v1/events/caf%C3%A9",
		ev + "/holds/hld.x",
		ev + "/holds/hld%2Fx",
		ev + "/holds/" + strings.Repeat("h", 65),
		ev + "/holds/",
		ev + "/holds/%20/confirm",
		ev + "/orders/o:1",
		ev + "/orders/ord%0A/cancel",
	} {
		t.Run(uri, func(t *testing.T) {
			method := "GET"
			if strings.HasSuffix(uri, "/confirm") || strings.HasSuffix(uri, "/cancel") {
				method = "POST"
			}
			before := f.state(t, f.event)
			resp := f.do(req{method: method, uri: uri})
			if resp.StatusCode() != 400 {
				t.Fatalf("status %d, want 400: %s", resp.StatusCode(), resp.Body())
			}
			if e := decodeError(t, resp); e.Error != "invalid_request" || !strings.HasPrefix(e.Message, "path: ") {
				t.Fatalf("body %+v", e)
			}
			f.unchanged(t, f.event, before, uri)
		})
	}
	// Percent-encoding of ordinary characters is decoded, per segment.
	if resp := f.do(req{method: "GET", uri: "/v1/events/" + strings.Replace(f.event, "-", "%2D", 1) + "/availability"}); resp.StatusCode() != 200 {
		t.Fatalf("encoded event id: %d %s", resp.StatusCode(), resp.Body())
	}
}

func TestHoldExpiredIs410(t *testing.T) {
	var nowNanos atomic.Int64
	nowNanos.Store(fixedClock().UnixNano())
	clock := func() time.Time { return time.Unix(0, nowNanos.Load()).UTC() }
	store, err := memstore.Open(memstore.Options{Dir: t.TempDir(), Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f := newFixtureOver(t, store, api.Options{})
	resp := f.do(req{method: "POST", uri: "/v1/events/" + f.event + "/holds", body: `{"user":"u1","seats":["A-1-1"],"ttl_ms":50}`})
	var h inventory.Hold
	json.Unmarshal(resp.Body(), &h)
	if resp.StatusCode() != 201 || !h.ExpiresAt.Equal(fixedClock().Add(50*time.Millisecond)) {
		t.Fatalf("hold with ttl_ms: %d %s", resp.StatusCode(), resp.Body())
	}
	nowNanos.Add(int64(time.Second))
	resp = f.do(req{method: "POST", uri: "/v1/events/" + f.event + "/holds/" + h.ID + "/confirm"})
	if e := decodeError(t, resp); resp.StatusCode() != 410 || e.Error != "hold_expired" {
		t.Fatalf("confirm of expired: %d %s", resp.StatusCode(), resp.Body())
	}
	resp = f.do(req{method: "DELETE", uri: "/v1/events/" + f.event + "/holds/" + h.ID})
	if resp.StatusCode() != 200 || !strings.Contains(string(resp.Body()), `"hold_status":"expired"`) {
		t.Fatalf("release of expired: %d %s", resp.StatusCode(), resp.Body())
	}
}
