package api_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/api"
	"github.com/waitroom/waitroom/inventory/inventorytest"
	"github.com/waitroom/waitroom/inventory/memstore"
)

// newCtx returns a RequestCtx holding one request, to be served again and
// again (as fasthttp reuses its contexts).
func newCtx(method, uri, body string, auth bool, headers ...string) *fasthttp.RequestCtx {
	var r fasthttp.Request
	r.Header.SetMethod(method)
	r.SetRequestURI(uri)
	if auth {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		r.Header.SetContentType("application/json")
		r.SetBodyString(body)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&r, nil, nil)
	return ctx
}

func serveAgain(srv *api.Server, ctx *fasthttp.RequestCtx) {
	ctx.Response.Reset()
	srv.Handler(ctx)
}

// BenchmarkHoldHandler is POST /v1/events/{event}/holds through Handler,
// with no network: memstore is the real path (a journal append and a
// group-committed fsync per hold), nullstore the HTTP layer alone.
func BenchmarkHoldHandler(b *testing.B) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.Run("memstore", func(b *testing.B) {
		store, err := memstore.Open(memstore.Options{Dir: b.TempDir(), Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		ev := inventorytest.NewEventID()
		if _, err := store.PutEvent(bg, ev, inventory.EventDef{GA: []inventory.Pool{{ID: "floor", Capacity: inventory.MaxPoolCapacity}}}, ""); err != nil {
			b.Fatal(err)
		}
		srv, err := api.New(store, api.Options{Token: token, Logger: quiet, Registry: prometheus.NewRegistry()})
		if err != nil {
			b.Fatal(err)
		}
		ctx := newCtx("POST", "/v1/events/"+ev+"/holds", `{"user":"bench","ga":{"pool":"floor","quantity":1}}`, true)
		b.ReportAllocs()
		for b.Loop() {
			serveAgain(srv, ctx)
			if ctx.Response.StatusCode() != 201 {
				b.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
			}
		}
	})
	b.Run("nullstore", func(b *testing.B) {
		now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		store := &stubStore{hold: inventory.Hold{ID: "hld_bench", Event: "ev1", User: "bench", Seats: []string{"A-1-1", "A-1-2"},
			Quantity: 2, PriceCents: 30000, CreatedAt: now, ExpiresAt: now.Add(8 * time.Minute), Status: inventory.HoldHeld}}
		srv, err := api.New(store, api.Options{Token: token, Logger: quiet, Registry: prometheus.NewRegistry()})
		if err != nil {
			b.Fatal(err)
		}
		ctx := newCtx("POST", "/v1/events/ev1/holds", `{"user":"bench","seats":["A-1-1","A-1-2"]}`, true,
			"Idempotency-Key", "cart-1", "X-Waitroom-Actor", "checkout")
		b.ReportAllocs()
		for b.Loop() {
			serveAgain(srv, ctx)
			if ctx.Response.StatusCode() != 201 {
				b.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
			}
		}
	})
}

// BenchmarkErrorPath is a refused token: the cheapest answer a flood of
// bad requests gets.
func BenchmarkErrorPath(b *testing.B) {
	srv, err := api.New(&stubStore{}, api.Options{Token: token, Registry: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := newCtx("GET", "/v1/events/ev1/availability", "", false)
	b.ReportAllocs()
	for b.Loop() {
		serveAgain(srv, ctx)
	}
}

// TestAllocs bounds what the health check and the error paths allocate
// per request, in steady state (the context reused, metric series made).
//
// Seen (go1.26.8, linux/amd64): healthz 0, unauthorized 0, not_found 0,
// method_not_allowed 0, bad path parameter 2 (the message and the error
// value), store error 5 (the two parameter strings, the error details).
// The bounds leave room for library changes without letting a
// per-request encoder or map in.
func TestAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are for full runs")
	}
	srv, err := api.New(&stubStore{err: inventory.ErrHoldNotFound}, api.Options{Token: token, Registry: prometheus.NewRegistry(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		ctx    *fasthttp.RequestCtx
		status int
		max    float64
	}{
		{"healthz", newCtx("GET", "/healthz", "", false), 200, 1},
		{"unauthorized", newCtx("GET", "/v1/events/ev1/availability", "", false), 401, 2},
		{"not_found", newCtx("GET", "/v1/nowhere", "", true), 404, 2},
		{"method_not_allowed", newCtx("PATCH", "/v1/events/ev1", "", true), 405, 2},
		{"bad path parameter", newCtx("GET", "/v1/events/a%20b/availability", "", true), 400, 4},
		{"store error", newCtx("GET", "/v1/events/ev1/holds/hld_x", "", true), 404, 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			serveAgain(srv, tc.ctx) // make the metric series
			if tc.ctx.Response.StatusCode() != tc.status {
				t.Fatalf("status %d, want %d: %s", tc.ctx.Response.StatusCode(), tc.status, tc.ctx.Response.Body())
			}
			n := testing.AllocsPerRun(200, func() { serveAgain(srv, tc.ctx) })
			t.Logf("%s: %.1f allocs per request", tc.name, n)
			if n > tc.max {
				t.Fatalf("%s allocates %.1f per request, want at most %.0f", tc.name, n, tc.max)
			}
		})
	}
}
