package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/api"
)

func TestNewRefusesMissingToken(t *testing.T) {
	s := &stubStore{}
	if _, err := api.New(s, api.Options{}); err == nil {
		t.Fatal("New without a token or InsecureNoAuth succeeded")
	}
	if _, err := api.New(s, api.Options{Token: "x", InsecureNoAuth: true}); err == nil {
		t.Fatal("New with both a token and InsecureNoAuth succeeded")
	}
	if _, err := api.New(nil, api.Options{Token: "x"}); err == nil {
		t.Fatal("New without a store succeeded")
	}
	srv, err := api.New(&stubStore{events: func(context.Context) ([]string, error) { return []string{"a"}, nil }},
		api.Options{InsecureNoAuth: true, Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if resp := serve(srv, req{method: "GET", uri: "/v1/events", noAuth: true}); resp.StatusCode() != 200 {
		t.Fatalf("InsecureNoAuth: %d %s", resp.StatusCode(), resp.Body())
	}
	// Two servers cannot share a registry's metric names.
	reg := prometheus.NewRegistry()
	if _, err := api.New(s, api.Options{Token: "x", Registry: reg}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.New(s, api.Options{Token: "x", Registry: reg}); err == nil {
		t.Fatal("a second server on the same registry succeeded")
	}
}

func TestAuth(t *testing.T) {
	f := newFixture(t, api.Options{})
	tests := []struct {
		name   string
		uri    string
		auth   string // "" = no Authorization header
		status int
	}{
		{"healthz open", "/healthz", "", 200},
		{"readyz open", "/readyz", "", 200},
		{"openapi open", "/v1/openapi.yaml", "", 200},
		{"healthz ignores a wrong token", "/healthz", "Bearer nope", 200},
		{"metrics needs the token", "/metrics", "", 401},
		{"metrics with token", "/metrics", "Bearer " + token, 200},
		{"v1 missing", "/v1/events", "", 401},
		{"v1 wrong", "/v1/events", "Bearer wrong-token", 401},
		{"v1 token prefix", "/v1/events", "Bearer " + token[:len(token)-1], 401},
		{"v1 token longer", "/v1/events", "Bearer " + token + "x", 401},
		{"v1 basic scheme", "/v1/events", "Basic " + token, 401},
		{"v1 scheme only", "/v1/events", "Bearer", 401},
		{"v1 empty bearer", "/v1/events", "Bearer ", 401},
		{"v1 right", "/v1/events", "Bearer " + token, 200},
		{"v1 scheme case-insensitive", "/v1/events", "bearer " + token, 200},
		{"event route missing", "/v1/events/" + f.event + "/availability", "", 401},
		{"unknown route without token is 401, not 404", "/v1/nope", "", 401},
		{"unknown route with token", "/v1/nope", "Bearer " + token, 404},
		{"unknown top-level route without token", "/admin", "", 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := req{method: "GET", uri: tc.uri, noAuth: true}
			if tc.auth != "" {
				r.headers = []string{"Authorization", tc.auth}
			}
			resp := f.do(r)
			if resp.StatusCode() != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode(), tc.status, resp.Body())
			}
			if tc.status == 401 {
				if e := decodeError(t, resp); e.Error != "unauthorized" {
					t.Fatalf("error %q", e.Error)
				}
				if got := string(resp.Header.Peek("WWW-Authenticate")); got != "Bearer" {
					t.Fatalf("WWW-Authenticate = %q", got)
				}
			}
		})
	}
}

func TestHealthAndReady(t *testing.T) {
	f := newFixture(t, api.Options{})
	resp := f.do(req{method: "GET", uri: "/healthz", noAuth: true})
	if string(resp.Body()) != `{"status":"ok"}`+"\n" {
		t.Fatalf("healthz body %q", resp.Body())
	}

	// A store that does not answer makes /readyz a 503 within about a
	// second; one that fails makes it a 503 at once.
	block := make(chan struct{})
	defer close(block)
	hung := &stubStore{events: func(ctx context.Context) ([]string, error) {
		select {
		case <-block:
		case <-ctx.Done():
		}
		return nil, ctx.Err()
	}}
	srv, err := api.New(hung, api.Options{Token: token, Registry: prometheus.NewRegistry(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp = serve(srv, req{method: "GET", uri: "/readyz", noAuth: true})
	if resp.StatusCode() != 503 || time.Since(start) > 3*time.Second {
		t.Fatalf("readyz on a hung store: %d after %v", resp.StatusCode(), time.Since(start))
	}
	if e := decodeError(t, resp); e.Error != "unavailable" {
		t.Fatalf("readyz error %q", e.Error)
	}
	failing := &stubStore{err: errors.New("redis: connection refused")}
	srv, _ = api.New(failing, api.Options{Token: token, Registry: prometheus.NewRegistry()})
	if resp := serve(srv, req{method: "GET", uri: "/readyz", noAuth: true}); resp.StatusCode() != 503 ||
		strings.Contains(string(resp.Body()), "redis") {
		t.Fatalf("readyz on a failing store: %d %s", resp.StatusCode(), resp.Body())
	}
}

func TestIdempotentReplay(t *testing.T) {
	f := newFixture(t, api.Options{})
	ev := "/v1/events/" + f.event
	hold := req{method: "POST", uri: ev + "/holds", body: `{"user":"u1","seats":["A-1-1"]}`, headers: []string{"Idempotency-Key", "k1", "X-Waitroom-Actor", "checkout"}}
	first := f.do(hold)
	if first.StatusCode() != 201 || first.Header.Peek("Idempotent-Replayed") != nil {
		t.Fatalf("first hold: %d, replayed %q", first.StatusCode(), first.Header.Peek("Idempotent-Replayed"))
	}
	second := f.do(hold)
	if second.StatusCode() != 201 || string(second.Header.Peek("Idempotent-Replayed")) != "true" {
		t.Fatalf("retry: %d, replayed %q", second.StatusCode(), second.Header.Peek("Idempotent-Replayed"))
	}
	var h1, h2 inventory.Hold
	json.Unmarshal(first.Body(), &h1)
	json.Unmarshal(second.Body(), &h2)
	if h1.ID == "" || h1.ID != h2.ID {
		t.Fatalf("retry returned another hold: %s vs %s", h1.ID, h2.ID)
	}
	mismatch := hold
	mismatch.body = `{"user":"u1","seats":["A-1-2"]}`
	resp := f.do(mismatch)
	if e := decodeError(t, resp); resp.StatusCode() != 422 || e.Error != "idempotency_mismatch" {
		t.Fatalf("mismatch: %d %+v", resp.StatusCode(), e)
	}

	conf := req{method: "POST", uri: ev + "/holds/" + h1.ID + "/confirm", headers: []string{"Idempotency-Key", "c1"}}
	if r := f.do(conf); r.StatusCode() != 200 || r.Header.Peek("Idempotent-Replayed") != nil {
		t.Fatalf("confirm: %d %s", r.StatusCode(), r.Body())
	}
	if r := f.do(conf); r.StatusCode() != 200 || string(r.Header.Peek("Idempotent-Replayed")) != "true" {
		t.Fatalf("confirm retry: %d %q", r.StatusCode(), r.Header.Peek("Idempotent-Replayed"))
	}

	h3, _ := f.store.Hold(bg, f.event, inventory.HoldRequest{User: "u2", GA: &inventory.GARequest{Pool: "floor", Quantity: 2}})
	rel := req{method: "DELETE", uri: ev + "/holds/" + h3.ID, headers: []string{"Idempotency-Key", "r1"}}
	if r := f.do(rel); r.StatusCode() != 200 || r.Header.Peek("Idempotent-Replayed") != nil {
		t.Fatalf("release: %d %s", r.StatusCode(), r.Body())
	}
	r := f.do(rel)
	if r.StatusCode() != 200 || string(r.Header.Peek("Idempotent-Replayed")) != "true" {
		t.Fatalf("release retry: %d %q", r.StatusCode(), r.Header.Peek("Idempotent-Replayed"))
	}
	var rv map[string]any
	json.Unmarshal(r.Body(), &rv)
	if rv["status"] != "released" || rv["hold_status"] != "released" || rv["hold_id"] != h3.ID || rv["event"] != f.event {
		t.Fatalf("release body %s", r.Body())
	}
	// The actor header reached the audit stream.
	p, _ := f.store.Audit(bg, f.event, "", 100)
	if e := p.Entries[1]; e.Action != "hold" || e.Actor != "checkout" {
		t.Fatalf("audit entry %+v", e)
	}
}

// TestContract checks the field names of the answers, which are a
// contract with origins.
func TestContract(t *testing.T) {
	f := newFixture(t, api.Options{})
	ev := "/v1/events/" + f.event
	fields := func(t *testing.T, resp *fasthttp.Response, status int, want ...string) map[string]any {
		t.Helper()
		if resp.StatusCode() != status {
			t.Fatalf("status %d, want %d: %s", resp.StatusCode(), status, resp.Body())
		}
		var m map[string]any
		if err := json.Unmarshal(resp.Body(), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range want {
			if _, ok := m[k]; !ok {
				t.Fatalf("%s lacks %q", resp.Body(), k)
			}
		}
		return m
	}
	def := `{"sections":[{"id":"A","tier":"gold","price_cents":15000,"rows":[{"id":"1","seats":20}]}],"ga":[{"id":"floor","capacity":5000,"price_cents":9000}],"limits":{"per_user":4},"hold_ttl_seconds":480}`
	fields(t, f.do(req{method: "PUT", uri: "/v1/events/show1", body: def}), 200, "event", "sections", "ga", "limits", "hold_ttl_seconds", "seats", "ga_capacity")
	fields(t, f.do(req{method: "GET", uri: "/v1/events/show1"}), 200, "event", "sections", "ga")
	m := fields(t, f.do(req{method: "GET", uri: "/v1/events"}), 200, "events")
	if !slices.Contains(m["events"].([]any), any("show1")) {
		t.Fatalf("events = %v", m["events"])
	}
	a := fields(t, f.do(req{method: "GET", uri: "/v1/events/show1/availability"}), 200, "event", "available", "held", "sold", "sections", "ga")
	if fl := a["ga"].(map[string]any)["floor"].(map[string]any); fl["capacity"] != 5000.0 || fl["available"] != 5000.0 {
		t.Fatalf("ga floor = %v", fl)
	}
	if sa := a["sections"].(map[string]any)["A"].(map[string]any); sa["available"] != 20.0 {
		t.Fatalf("section A = %v", sa)
	}
	h := fields(t, f.do(req{method: "POST", uri: "/v1/events/show1/holds", body: `{"user":"u1","best":{"section":"A","quantity":2}}`}), 201,
		"hold_id", "event", "user", "seats", "quantity", "expires_at", "created_at", "price_cents", "status")
	if h["status"] != "held" {
		t.Fatalf("hold status %v", h["status"])
	}
	fields(t, f.do(req{method: "POST", uri: "/v1/events/show1/holds", body: `{"user":"u1","best":{"tier":"gold","quantity":1},"ttl_seconds":60}`}), 201, "hold_id")
	fields(t, f.do(req{method: "POST", uri: "/v1/events/show1/holds", body: `{"user":"u2","ga":{"pool":"floor","quantity":2}}`}), 201, "pool")
	resp := f.do(req{method: "POST", uri: "/v1/events/show1/holds", body: `{"user":"u1","ga":{"pool":"floor","quantity":2}}`})
	if e := decodeError(t, resp); resp.StatusCode() != 422 || e.Error != "user_limit" || *e.Limit != 4 || *e.Current != 3 {
		t.Fatalf("user limit: %d %s", resp.StatusCode(), resp.Body())
	}
	id := h["hold_id"].(string)
	fields(t, f.do(req{method: "GET", uri: "/v1/events/show1/holds/" + id}), 200, "hold_id", "status")
	o := fields(t, f.do(req{method: "POST", uri: "/v1/events/show1/holds/" + id + "/confirm", body: `{"payment_ref":"pay_1"}`}), 200,
		"order_id", "hold_id", "seats", "status", "payment_ref", "confirmed_at")
	if o["status"] != "confirmed" {
		t.Fatalf("order status %v", o["status"])
	}
	g := fields(t, f.do(req{method: "GET", uri: "/v1/events/show1/holds/" + id}), 200, "order_id")
	if g["status"] != "confirmed" || g["order_id"] != o["order_id"] {
		t.Fatalf("hold after confirm %v", g)
	}
	resp = f.do(req{method: "DELETE", uri: "/v1/events/show1/holds/" + id})
	if e := decodeError(t, resp); resp.StatusCode() != 409 || e.Error != "hold_confirmed" {
		t.Fatalf("release of confirmed: %d %s", resp.StatusCode(), resp.Body())
	}
	oid := o["order_id"].(string)
	fields(t, f.do(req{method: "GET", uri: "/v1/events/show1/orders/" + oid}), 200, "order_id")
	c := fields(t, f.do(req{method: "POST", uri: "/v1/events/show1/orders/" + oid + "/cancel", body: `{"reason":"refund"}`}), 200, "cancelled_at")
	if c["status"] != "cancelled" {
		t.Fatalf("cancel status %v", c["status"])
	}
	resp = f.do(req{method: "POST", uri: "/v1/events/show1/holds/" + id + "/confirm"})
	if e := decodeError(t, resp); resp.StatusCode() != 409 || e.Error != "order_cancelled" {
		t.Fatalf("confirm after cancel: %d %s", resp.StatusCode(), resp.Body())
	}
	sm := fields(t, f.do(req{method: "GET", uri: "/v1/events/show1/seats?section=A"}), 200, "event", "section", "seats")
	if seat := sm["seats"].([]any)[0].(map[string]any); seat["id"] != "A-1-1" || seat["status"] == nil {
		t.Fatalf("seat map %v", seat)
	}
	ap := fields(t, f.do(req{method: "GET", uri: "/v1/events/show1/audit?limit=2"}), 200, "event", "entries", "next")
	if n := len(ap["entries"].([]any)); n != 2 {
		t.Fatalf("audit page of %d", n)
	}
	fields(t, f.do(req{method: "GET", uri: "/v1/events/show1/audit?after=" + ap["next"].(string) + "&limit=1000"}), 200, "entries")
	fields(t, f.do(req{method: "GET", uri: "/v1/events/show1/audit?after="}), 200, "entries")

	// A conflicting redefinition lists seats and pools.
	resp = f.do(req{method: "PUT", uri: "/v1/events/show1", body: `{"sections":[{"id":"B","rows":[{"id":"1","seats":2}]}]}`})
	if e := decodeError(t, resp); resp.StatusCode() != 409 || e.Error != "definition_conflict" || len(e.Unavailable) == 0 || !slices.Equal(e.Pools, []string{"floor"}) {
		t.Fatalf("definition conflict: %d %s", resp.StatusCode(), resp.Body())
	}
	// Explicit seats: taken and unknown seats are listed.
	resp = f.do(req{method: "POST", uri: "/v1/events/show1/holds", body: `{"user":"u9","seats":["A-1-1","A-1-2","A-1-3"]}`})
	if resp.StatusCode() != 201 {
		t.Fatalf("hold: %d %s", resp.StatusCode(), resp.Body())
	}
	resp = f.do(req{method: "POST", uri: "/v1/events/show1/holds", body: `{"user":"u8","seats":["A-1-3","A-1-4"]}`})
	if e := decodeError(t, resp); resp.StatusCode() != 409 || e.Error != "seat_unavailable" || !slices.Equal(e.Unavailable, []string{"A-1-3"}) {
		t.Fatalf("seat unavailable: %d %s", resp.StatusCode(), resp.Body())
	}
	resp = f.do(req{method: "POST", uri: "/v1/events/show1/holds", body: `{"user":"u8","seats":["A-1-4","A-1-99","Q-1-1"]}`})
	if e := decodeError(t, resp); resp.StatusCode() != 404 || e.Error != "seat_not_found" || !slices.Equal(e.Unknown, []string{"A-1-99", "Q-1-1"}) {
		t.Fatalf("seat not found: %d %s", resp.StatusCode(), resp.Body())
	}
	for body, code := range map[string]string{
		`{"user":"u8","best":{"section":"Z","quantity":1}}`: "section_not_found",
		`{"user":"u8","best":{"tier":"tin","quantity":1}}`:  "tier_not_found",
		`{"user":"u8","ga":{"pool":"roof","quantity":1}}`:   "pool_not_found",
	} {
		resp = f.do(req{method: "POST", uri: "/v1/events/show1/holds", body: body})
		if e := decodeError(t, resp); resp.StatusCode() != 404 || e.Error != code {
			t.Fatalf("%s: %d %s", body, resp.StatusCode(), resp.Body())
		}
	}
	_ = ev
}

func TestMetrics(t *testing.T) {
	f := newFixture(t, api.Options{})
	ev := "/v1/events/" + f.event
	f.do(req{method: "POST", uri: ev + "/holds", body: `{"user":"u1","seats":["A-1-1"]}`})
	f.do(req{method: "POST", uri: ev + "/holds", body: `{"user":"u2","seats":["A-1-1"]}`})
	f.do(req{method: "GET", uri: ev + "/holds/hld_zzz"})
	f.do(req{method: "GET", uri: "/v1/this/is/not/a/route"})
	f.srv.ObserveReap(f.event, 3)
	resp := f.do(req{method: "GET", uri: "/metrics"})
	if resp.StatusCode() != 200 || !strings.HasPrefix(string(resp.Header.ContentType()), "text/plain") {
		t.Fatalf("metrics: %d %s", resp.StatusCode(), resp.Header.ContentType())
	}
	text := string(resp.Body())
	for _, want := range []string{
		`waitroom_inventory_http_requests_total{code="201",method="POST",route="/v1/events/{event}/holds"} 1`,
		`waitroom_inventory_http_requests_total{code="409",method="POST",route="/v1/events/{event}/holds"} 1`,
		`waitroom_inventory_http_requests_total{code="404",method="GET",route="/v1/events/{event}/holds/{hold}"} 1`,
		`waitroom_inventory_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`waitroom_inventory_http_request_duration_seconds_bucket{method="POST",route="/v1/events/{event}/holds",le="+Inf"} 2`,
		`waitroom_inventory_operations_total{operation="hold",outcome="ok"} 1`,
		`waitroom_inventory_operations_total{operation="hold",outcome="seat_unavailable"} 1`,
		`waitroom_inventory_reaped_holds_total 3`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, raw := range []string{f.event, "hld_zzz", "/this/is"} {
		if strings.Contains(text, raw) {
			t.Errorf("metrics contain the raw path part %q", raw)
		}
	}
}

// TestPanicIsAnswered: a panicking store gives a 500 JSON answer, is
// logged, and the server goes on.
func TestPanicIsAnswered(t *testing.T) {
	logs := &syncBuffer{}
	srv, err := api.New(&panicStore{}, api.Options{Token: token, Registry: prometheus.NewRegistry(), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	resp := serve(srv, req{method: "GET", uri: "/v1/events"})
	if e := decodeError(t, resp); resp.StatusCode() != 500 || e.Error != "internal_error" || strings.Contains(string(resp.Body()), "boom") {
		t.Fatalf("panic: %d %s", resp.StatusCode(), resp.Body())
	}
	if !strings.Contains(logs.String(), "boom") {
		t.Fatal("panic not logged")
	}
}

type panicStore struct{ stubStore }

func (*panicStore) Events(context.Context) ([]string, error) { panic("boom") }

// TestServe runs the real server on a loopback listener: limits enforced
// by fasthttp itself answer in JSON, and the server shuts down when its
// context ends.
func TestServe(t *testing.T) {
	f := newFixture(t, api.Options{MaxBodyBytes: 4096})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()
	hc := &http.Client{Timeout: 5 * time.Second}

	do := func(method, path, body string) (*http.Response, []byte) {
		t.Helper()
		r, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, body := do("GET", "/v1/events/"+f.event+"/availability", "")
	if resp.StatusCode != 200 || resp.Header.Get("Server") != "" {
		t.Fatalf("availability: %d (Server %q) %s", resp.StatusCode, resp.Header.Get("Server"), body)
	}
	// Over the limit: fasthttp refuses it while reading; the answer is ours.
	resp, body = do("POST", "/v1/events/"+f.event+"/holds", `{"user":"`+strings.Repeat("x", 8192)+`"}`)
	var e errorBody
	if json.Unmarshal(body, &e); resp.StatusCode != 413 || e.Error != "payload_too_large" {
		t.Fatalf("too large: %d %s", resp.StatusCode, body)
	}
	// Dot segments are not resolved on the way in.
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /v1/events/%s/holds/.. HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", f.event, token)
	raw, _ := io.ReadAll(conn)
	conn.Close()
	if !strings.HasPrefix(string(raw), "HTTP/1.1 400") {
		t.Fatalf("dot segment: %q", raw)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve returned %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if _, err := hc.Get(base + "/healthz"); err == nil {
		t.Fatal("still serving after shutdown")
	}
}
