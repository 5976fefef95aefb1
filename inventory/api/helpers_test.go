package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/api"
	"github.com/waitroom/waitroom/inventory/inventorytest"
	"github.com/waitroom/waitroom/inventory/memstore"
)

const token = "test-token-0123456789"

var bg = context.Background()

// fixture is a server over a real memstore, driven without a network by
// calling Handler with a RequestCtx.
type fixture struct {
	store *memstore.Store
	srv   *api.Server
	reg   *prometheus.Registry
	logs  *syncBuffer
	event string // defined with inventorytest.Theatre
}

// fixedClock makes holds never expire, so that a test (or fuzz run)
// compares states that only requests change.
func fixedClock() time.Time { return time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC) }

func newFixture(tb testing.TB, opts api.Options) *fixture {
	tb.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := memstore.Open(memstore.Options{Dir: tb.TempDir(), Clock: fixedClock, Logger: quiet})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	return newFixtureOver(tb, store, opts)
}

func newFixtureOver(tb testing.TB, store *memstore.Store, opts api.Options) *fixture {
	tb.Helper()
	f := &fixture{store: store, logs: &syncBuffer{}}
	if opts.Token == "" && !opts.InsecureNoAuth {
		opts.Token = token
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(f.logs, nil))
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	f.reg = opts.Registry
	srv, err := api.New(store, opts)
	if err != nil {
		tb.Fatal(err)
	}
	f.srv = srv
	f.event = inventorytest.NewEventID()
	if _, err := store.PutEvent(bg, f.event, inventorytest.Theatre(), "test"); err != nil {
		tb.Fatal(err)
	}
	return f
}

// req is one request to drive the handler with.
type req struct {
	method, uri string
	body        string
	ctype       string // Content-Type; "application/json" when a body is given and this is "", none when "-"
	noAuth      bool
	headers     []string // name, value pairs
}

// do runs r through Handler and returns a copy of the response.
func (f *fixture) do(r req) *fasthttp.Response {
	return serve(f.srv, r)
}

func serve(srv *api.Server, r req) *fasthttp.Response {
	var hr fasthttp.Request
	hr.Header.SetMethod(r.method)
	hr.SetRequestURI(r.uri)
	if !r.noAuth {
		hr.Header.Set("Authorization", "Bearer "+token)
	}
	if r.body != "" {
		switch r.ctype {
		case "":
			hr.Header.SetContentType("application/json")
		case "-": // no Content-Type
		default:
			hr.Header.SetContentType(r.ctype)
		}
		hr.SetBodyString(r.body)
	} else if r.ctype != "" {
		hr.Header.SetContentType(r.ctype)
	}
	for i := 0; i+1 < len(r.headers); i += 2 {
		hr.Header.Add(r.headers[i], r.headers[i+1])
	}
	var ctx fasthttp.RequestCtx
	ctx.Init(&hr, nil, nil)
	srv.Handler(&ctx)
	resp := &fasthttp.Response{}
	ctx.Response.CopyTo(resp)
	return resp
}

// errorBody is an error answer.
type errorBody struct {
	Error       string   `json:"error"`
	Message     string   `json:"message"`
	Unavailable []string `json:"unavailable"`
	Unknown     []string `json:"unknown"`
	Pools       []string `json:"pools"`
	Limit       *int     `json:"limit"`
	Current     *int     `json:"current"`
	Available   *int     `json:"available"`
}

// decodeError checks that resp is a JSON error answer and returns it.
func decodeError(tb testing.TB, resp *fasthttp.Response) errorBody {
	tb.Helper()
	var e errorBody
	if ct := string(resp.Header.ContentType()); ct != "application/json" {
		tb.Fatalf("error answer %d has content type %q, body %q", resp.StatusCode(), ct, resp.Body())
	}
	if err := json.Unmarshal(resp.Body(), &e); err != nil || e.Error == "" || e.Message == "" {
		tb.Fatalf("error answer %d is not {error, message}: %q (%v)", resp.StatusCode(), resp.Body(), err)
	}
	return e
}

// state is what must not change when a request is refused.
type state struct {
	event, avail string
	cursor       string
}

func (f *fixture) state(tb testing.TB, ev string) state {
	tb.Helper()
	var s state
	e, err := f.store.Event(bg, ev)
	if err != nil {
		tb.Fatal(err)
	}
	a, err := f.store.Availability(bg, ev)
	if err != nil {
		tb.Fatal(err)
	}
	eb, _ := json.Marshal(e)
	ab, _ := json.Marshal(a)
	s.event, s.avail = string(eb), string(ab)
	after := ""
	for {
		p, err := f.store.Audit(bg, ev, after, inventory.MaxAuditPage)
		if err != nil {
			tb.Fatal(err)
		}
		after = p.Next
		if len(p.Entries) == 0 {
			break
		}
	}
	s.cursor = after
	return s
}

// unchanged fails unless ev's definition, counts and audit stream are
// as they were in before.
func (f *fixture) unchanged(tb testing.TB, ev string, before state, what string) {
	tb.Helper()
	now := f.state(tb, ev)
	if now.event != before.event || now.avail != before.avail {
		tb.Fatalf("%s changed the store:\nbefore %s %s\nafter  %s %s", what, before.event, before.avail, now.event, now.avail)
	}
	p, err := f.store.Audit(bg, ev, before.cursor, 10)
	if err != nil {
		tb.Fatal(err)
	}
	if len(p.Entries) != 0 {
		tb.Fatalf("%s added audit entries: %+v", what, p.Entries)
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// stubStore answers every call with err (and Events with events), to
// reach error paths a real store only reaches by failing.
type stubStore struct {
	err    error
	events func(ctx context.Context) ([]string, error)
	hold   inventory.Hold
}

func (s *stubStore) PutEvent(context.Context, string, inventory.EventDef, string) (inventory.Event, error) {
	return inventory.Event{}, s.err
}
func (s *stubStore) Event(context.Context, string) (inventory.Event, error) {
	return inventory.Event{}, s.err
}
func (s *stubStore) Events(ctx context.Context) ([]string, error) {
	if s.events != nil {
		return s.events(ctx)
	}
	return nil, s.err
}
func (s *stubStore) Ping(ctx context.Context) error {
	if s.events != nil {
		_, err := s.events(ctx)
		return err
	}
	return s.err
}
func (s *stubStore) Hold(context.Context, string, inventory.HoldRequest) (inventory.Hold, error) {
	return s.hold, s.err
}
func (s *stubStore) GetHold(context.Context, string, string) (inventory.Hold, error) {
	return inventory.Hold{}, s.err
}
func (s *stubStore) Confirm(context.Context, string, string, inventory.ConfirmRequest) (inventory.Order, error) {
	return inventory.Order{}, s.err
}
func (s *stubStore) Release(context.Context, string, string, inventory.ReleaseRequest) (inventory.Release, error) {
	return inventory.Release{}, s.err
}
func (s *stubStore) Extend(context.Context, string, string, inventory.ExtendRequest) (inventory.Hold, error) {
	return inventory.Hold{}, s.err
}
func (s *stubStore) Cancel(context.Context, string, string, inventory.CancelRequest) (inventory.Order, error) {
	return inventory.Order{}, s.err
}
func (s *stubStore) GetOrder(context.Context, string, string) (inventory.Order, error) {
	return inventory.Order{}, s.err
}
func (s *stubStore) Availability(context.Context, string) (inventory.Availability, error) {
	return inventory.Availability{}, s.err
}
func (s *stubStore) SeatMap(context.Context, string, string) (inventory.SeatMap, error) {
	return inventory.SeatMap{}, s.err
}
func (s *stubStore) Audit(context.Context, string, string, int) (inventory.AuditPage, error) {
	return inventory.AuditPage{}, s.err
}
func (s *stubStore) Reap(context.Context, string, int) (int, error) { return 0, s.err }
func (s *stubStore) Close() error                                   { return nil }

var _ inventory.Store = (*stubStore)(nil)
