package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
)

var bg = context.Background()

// recorder is a loopback HTTP server that answers every request with a
// canned status and body and remembers the last request, to check the
// client's side of the wire format exactly.
type recorder struct {
	*httptest.Server
	mu      sync.Mutex
	status  int
	body    string
	headers map[string]string
	last    *http.Request
	lastRaw []byte
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{status: 200, body: `{}`}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.last, r.lastRaw = req, b
		for k, v := range r.headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(r.status)
		io.WriteString(w, r.body)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) answer(status int, body string, headers ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status, r.body, r.headers = status, body, map[string]string{}
	for i := 0; i+1 < len(headers); i += 2 {
		r.headers[headers[i]] = headers[i+1]
	}
}

func (r *recorder) request() (*http.Request, map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var m map[string]any
	if len(r.lastRaw) > 0 {
		json.Unmarshal(r.lastRaw, &m)
	}
	return r.last, m
}

func TestErrorMapping(t *testing.T) {
	rec := newRecorder(t)
	c := client.New(rec.URL, "tok")
	tests := []struct {
		status int
		body   string
		kind   error
		check  func(t *testing.T, d *inventory.Error)
	}{
		{409, `{"error":"seat_unavailable","message":"seats are held or sold","unavailable":["A-1-2","A-1-4"]}`, inventory.ErrSeatUnavailable,
			func(t *testing.T, d *inventory.Error) {
				if !slices.Equal(d.Seats, []string{"A-1-2", "A-1-4"}) || d.Message != "seats are held or sold" {
					t.Fatalf("details %+v", d)
				}
			}},
		{404, `{"error":"seat_not_found","message":"no such seat","unknown":["Z-1-1"]}`, inventory.ErrSeatNotFound,
			func(t *testing.T, d *inventory.Error) {
				if !slices.Equal(d.Seats, []string{"Z-1-1"}) {
					t.Fatalf("details %+v", d)
				}
			}},
		{409, `{"error":"definition_conflict","message":"m","unavailable":["A-3-10"],"pools":["floor"]}`, inventory.ErrDefinitionConflict,
			func(t *testing.T, d *inventory.Error) {
				if !slices.Equal(d.Seats, []string{"A-3-10"}) || !slices.Equal(d.Pools, []string{"floor"}) {
					t.Fatalf("details %+v", d)
				}
			}},
		{422, `{"error":"user_limit","message":"m","limit":4,"current":3}`, inventory.ErrUserLimit,
			func(t *testing.T, d *inventory.Error) {
				if d.Limit != 4 || d.Current != 3 {
					t.Fatalf("details %+v", d)
				}
			}},
		{409, `{"error":"not_enough_seats","message":"m","available":2}`, inventory.ErrNotEnoughSeats,
			func(t *testing.T, d *inventory.Error) {
				if d.Available != 2 {
					t.Fatalf("details %+v", d)
				}
			}},
		{409, `{"error":"sold_out","message":"nothing is available"}`, inventory.ErrSoldOut, nil},
		{410, `{"error":"hold_expired","message":"m"}`, inventory.ErrHoldExpired, nil},
		{409, `{"error":"hold_released","message":"m"}`, inventory.ErrHoldReleased, nil},
		{409, `{"error":"hold_confirmed","message":"m"}`, inventory.ErrHoldConfirmed, nil},
		{409, `{"error":"order_cancelled","message":"m"}`, inventory.ErrOrderCancelled, nil},
		{422, `{"error":"idempotency_mismatch","message":"m"}`, inventory.ErrIdempotencyMismatch, nil},
		{404, `{"error":"event_not_found","message":"m"}`, inventory.ErrEventNotFound, nil},
		{404, `{"error":"hold_not_found","message":"m"}`, inventory.ErrHoldNotFound, nil},
		{404, `{"error":"order_not_found","message":"m"}`, inventory.ErrOrderNotFound, nil},
		{400, `{"error":"invalid_request","message":"body: field \"user\" given twice"}`, inventory.ErrInvalid, nil},
		{503, `{"error":"unavailable","message":"the inventory store is unavailable"}`, inventory.ErrUnavailable, nil},
	}
	for _, tc := range tests {
		t.Run(tc.kind.Error(), func(t *testing.T) {
			rec.answer(tc.status, tc.body)
			_, err := c.Hold(bg, "ev1", inventory.HoldRequest{User: "u1", Seats: []string{"A-1-1"}})
			if !errors.Is(err, tc.kind) {
				t.Fatalf("error %v, want %v", err, tc.kind)
			}
			var d *inventory.Error
			if !errors.As(err, &d) {
				t.Fatalf("error %T is not *inventory.Error", err)
			}
			if tc.check != nil {
				tc.check(t, d)
			}
		})
	}

	// Answers without an inventory code.
	for _, tc := range []struct {
		status int
		body   string
		is     error
		isNot  error
	}{
		{401, `{"error":"unauthorized","message":"a valid bearer token is required"}`, client.ErrUnauthorized, nil},
		{413, `{"error":"payload_too_large","message":"m"}`, inventory.ErrInvalid, nil},
		{415, `{"error":"unsupported_media_type","message":"m"}`, inventory.ErrInvalid, nil},
		{404, `{"error":"not_found","message":"no such endpoint"}`, nil, inventory.ErrEventNotFound},
		{502, `<html>bad gateway</html>`, nil, inventory.ErrUnavailable},
		{504, ``, nil, inventory.ErrUnavailable},
	} {
		rec.answer(tc.status, tc.body)
		_, err := c.Events(bg)
		var re *client.ResponseError
		if !errors.As(err, &re) || re.StatusCode != tc.status {
			t.Fatalf("%d: error %T %v, want *client.ResponseError", tc.status, err, err)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Fatalf("%d: %v is not %v", tc.status, err, tc.is)
		}
		if tc.isNot != nil && errors.Is(err, tc.isNot) {
			t.Fatalf("%d: %v must not be %v", tc.status, err, tc.isNot)
		}
	}
}

func TestRequestEncoding(t *testing.T) {
	rec := newRecorder(t)
	c := client.New(rec.URL+"/", "s3cret", client.WithActor("checkout"), client.WithUserAgent("shop/2"))

	rec.answer(201, `{"hold_id":"hld_1","status":"held"}`, "Idempotent-Replayed", "true")
	h, err := c.Hold(bg, "ev1", inventory.HoldRequest{User: "u1", Seats: []string{"A-1-1"}, TTL: 40 * time.Millisecond, IdempotencyKey: "k-1"})
	if err != nil || !h.Replayed || h.ID != "hld_1" {
		t.Fatalf("hold = %+v, %v", h, err)
	}
	r, body := rec.request()
	if r.Method != "POST" || r.URL.Path != "/v1/events/ev1/holds" || r.Header.Get("Authorization") != "Bearer s3cret" ||
		r.Header.Get("Idempotency-Key") != "k-1" || r.Header.Get("X-Waitroom-Actor") != "checkout" ||
		r.Header.Get("User-Agent") != "shop/2" || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("request %s %s %v", r.Method, r.URL.Path, r.Header)
	}
	if body["ttl_ms"] != 40.0 || body["ttl_seconds"] != nil || body["user"] != "u1" || body["best"] != nil || body["ga"] != nil {
		t.Fatalf("body %v", body)
	}

	for _, tc := range []struct {
		req        inventory.HoldRequest
		ttlSeconds any
		ttlMs      any
	}{
		{inventory.HoldRequest{User: "u", GA: &inventory.GARequest{Pool: "p", Quantity: 1}, TTL: 2 * time.Second}, 2.0, nil},
		{inventory.HoldRequest{User: "u", GA: &inventory.GARequest{Pool: "p", Quantity: 1}, TTLSeconds: 300}, 300.0, nil},
		{inventory.HoldRequest{User: "u", GA: &inventory.GARequest{Pool: "p", Quantity: 1}, TTL: 1500 * time.Millisecond}, nil, 1500.0},
		{inventory.HoldRequest{User: "u", GA: &inventory.GARequest{Pool: "p", Quantity: 1}, TTL: 2 * time.Second, TTLSeconds: 5}, 5.0, 2000.0},
	} {
		rec.answer(201, `{}`)
		if _, err := c.Hold(bg, "ev1", tc.req); err != nil {
			t.Fatal(err)
		}
		_, body := rec.request()
		if body["ttl_seconds"] != tc.ttlSeconds || body["ttl_ms"] != tc.ttlMs {
			t.Fatalf("TTL %v / %d sent as %v", tc.req.TTL, tc.req.TTLSeconds, body)
		}
	}
	// Seats: absent, or present and empty (which the sidecar refuses).
	c.Hold(bg, "ev1", inventory.HoldRequest{User: "u", Seats: []string{}})
	if _, body := rec.request(); body["seats"] == nil {
		t.Fatalf("empty seats were dropped: %v", body)
	}

	// What cannot travel is refused before any request.
	rec.answer(500, `{}`)
	for _, req := range []inventory.HoldRequest{
		{User: "u", Seats: []string{"A-1-1"}, TTL: 1500 * time.Microsecond},
		{User: "u", Seats: []string{"A-1-1"}, TTL: -time.Second},
		{User: "u", Seats: []string{"A-1-1"}, IdempotencyKey: "k\n1"},
		{User: "u", Seats: []string{"A-1-1"}, Actor: "a\x00"},
		{User: "u", Seats: []string{"A-1-1"}, Actor: " padded"},
	} {
		if _, err := c.Hold(bg, "ev1", req); !errors.Is(err, inventory.ErrInvalid) {
			t.Fatalf("%+v: error %v, want ErrInvalid", req, err)
		}
	}

	// A request's own actor beats the client's.
	rec.answer(200, `{"order_id":"o1"}`)
	if _, err := c.Confirm(bg, "ev1", "hld_1", inventory.ConfirmRequest{PaymentRef: "p", Actor: "support"}); err != nil {
		t.Fatal(err)
	}
	r, body = rec.request()
	if r.URL.Path != "/v1/events/ev1/holds/hld_1/confirm" || r.Header.Get("X-Waitroom-Actor") != "support" || body["payment_ref"] != "p" {
		t.Fatalf("confirm %s %v %v", r.URL.Path, r.Header, body)
	}

	// Path segments are escaped one by one, dot segments included.
	rec.answer(404, `{"error":"invalid_request","message":"path"}`)
	c.GetHold(bg, "../admin", "..")
	r, _ = rec.request()
	if r.URL.RawPath != "/v1/events/..%2Fadmin/holds/%2E%2E" {
		t.Fatalf("escaped path %q", r.URL.RawPath)
	}

	rec.answer(200, `{"event":"ev1","entries":[],"next":"0"}`)
	c.Audit(bg, "ev1", "12", 5000)
	r, _ = rec.request()
	if r.URL.Query().Get("after") != "12" || r.URL.Query().Get("limit") != "1000" {
		t.Fatalf("audit query %q", r.URL.RawQuery)
	}
	c.Audit(bg, "ev1", "", 0)
	if r, _ = rec.request(); r.URL.RawQuery != "" {
		t.Fatalf("audit query %q", r.URL.RawQuery)
	}
	rec.answer(200, `{"hold_id":"h","status":"released","hold_status":"expired"}`, "Idempotent-Replayed", "true")
	rel, err := c.Release(bg, "ev1", "h", inventory.ReleaseRequest{IdempotencyKey: "r"})
	if err != nil || !rel.Replayed || rel.HoldStatus != inventory.HoldExpired {
		t.Fatalf("release = %+v, %v", rel, err)
	}
	if r, _ = rec.request(); r.Method != "DELETE" || r.Header.Get("Idempotency-Key") != "r" {
		t.Fatalf("release %s %v", r.Method, r.Header)
	}
}

func TestReapAndTransport(t *testing.T) {
	c := client.New("http://127.0.0.1:1", "tok")
	if _, err := c.Reap(bg, "ev1", 10); !errors.Is(err, client.ErrReapNotSupported) {
		t.Fatalf("Reap: %v", err)
	}
	// Nothing listens on port 1: a transport error, which says nothing
	// about whether the request was applied.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c = client.New("http://"+addr, "tok")
	_, err = c.Hold(bg, "ev1", inventory.HoldRequest{User: "u1", Seats: []string{"A-1-1"}})
	var te *client.TransportError
	if !errors.As(err, &te) || errors.Is(err, inventory.ErrUnavailable) {
		t.Fatalf("error %T %v, want a *client.TransportError that is not ErrUnavailable", err, err)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := c.Events(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(client.ErrReapNotSupported.Error(), "reaps") {
		t.Fatal(client.ErrReapNotSupported)
	}
}
