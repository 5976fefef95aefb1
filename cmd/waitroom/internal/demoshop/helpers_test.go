package demoshop

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/api"
	"github.com/waitroom/waitroom/inventory/client"
	"github.com/waitroom/waitroom/inventory/memstore"
)

const (
	testEvent = "demo-concert"
	sidecarTk = "demoshop-test-token"
)

var bg = context.Background()

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

// recordingPayments is FakePayments that remembers every call and can run
// a hook inside Charge (to let time pass "while the visitor pays").
type recordingPayments struct {
	FakePayments
	mu       sync.Mutex
	charges  []Charge
	refunds  []Refund
	onCharge func()
	// distinctRefs makes every charge's reference different, like a
	// provider that does not deduplicate by key.
	distinctRefs bool
}

func (p *recordingPayments) Charge(ctx context.Context, c Charge) (string, error) {
	p.mu.Lock()
	p.charges = append(p.charges, c)
	hook, n, distinct := p.onCharge, len(p.charges), p.distinctRefs
	p.mu.Unlock()
	if hook != nil {
		hook()
	}
	ref, err := p.FakePayments.Charge(ctx, c)
	if distinct {
		ref += "_" + strconv.Itoa(n)
	}
	return ref, err
}

// setHook sets (or with nil clears) the function Charge runs.
func (p *recordingPayments) setHook(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onCharge = f
}

func (p *recordingPayments) Refund(ctx context.Context, r Refund) error {
	p.mu.Lock()
	p.refunds = append(p.refunds, r)
	p.mu.Unlock()
	return p.FakePayments.Refund(ctx, r)
}

func (p *recordingPayments) calls() (charges []Charge, refunds []Refund) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Charge(nil), p.charges...), append([]Refund(nil), p.refunds...)
}

// sidecar is a real seat-hold sidecar in this process: a memstore in a
// directory behind an api.Server on a loopback port.
type sidecar struct {
	url   string
	store *memstore.Store
	stop  func()
}

func startSidecar(t testing.TB, dir string, clock func() time.Time) *sidecar {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := memstore.Open(memstore.Options{Dir: dir, Clock: clock, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(store, api.Options{Token: sidecarTk, Logger: quiet})
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var once sync.Once
	sc := &sidecar{url: "http://" + ln.Addr().String(), store: store, stop: func() {
		once.Do(func() {
			cancel()
			<-done
			store.Close()
		})
	}}
	t.Cleanup(sc.stop)
	return sc
}

// harness is a shop over a real sidecar, served on a loopback port.
type harness struct {
	t     testing.TB
	clock *fakeclock.Clock
	dir   string
	sc    *sidecar
	inv   *client.Client
	shop  *Shop
	srv   *httptest.Server
	pay   *recordingPayments
	logs  *syncBuffer
	hc    *http.Client
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	h := &harness{t: t, clock: fakeclock.New(time.Date(2030, 5, 1, 18, 0, 0, 0, time.UTC)), dir: t.TempDir(),
		logs: &syncBuffer{}}
	h.sc = startSidecar(t, h.dir, h.clock.Now)
	h.inv = client.New(h.sc.url, sidecarTk)
	t.Cleanup(func() { h.inv.Close() })
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.pay = &recordingPayments{FakePayments: FakePayments{Logger: log}}
	shop, err := New(Options{Inventory: h.inv, Event: testEvent, Secret: []byte("0123456789abcdef0123456789abcdef"),
		Payments: h.pay, Logger: log, Clock: h.clock.Now, SessionScript: "/_wr/session.js?event=" + testEvent})
	if err != nil {
		t.Fatal(err)
	}
	if err := shop.Setup(bg); err != nil {
		t.Fatal(err)
	}
	h.shop = shop
	h.srv = httptest.NewServer(shop.Handler())
	t.Cleanup(h.srv.Close)
	h.hc = &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	t.Cleanup(h.hc.CloseIdleConnections)
	return h
}

// resp is a response read whole.
type resp struct {
	status int
	header http.Header
	body   string
}

func (r resp) location() string { return r.header.Get("Location") }

// request sends one request; headers are name, value pairs.
func (h *harness) request(method, path string, body io.Reader, headers ...string) resp {
	h.t.Helper()
	req, err := http.NewRequest(method, h.srv.URL+path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	res, err := h.hc.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: string(b)}
}

// get requests a page as visitor, through the "proxy" (with the headers
// it sets); visitor "" sends none.
func (h *harness) get(path, visitor string) resp {
	h.t.Helper()
	if visitor == "" {
		return h.request(http.MethodGet, path, nil)
	}
	return h.request(http.MethodGet, path, nil, HeaderVisitor, visitor, HeaderEvent, testEvent)
}

// post sends a form as visitor, as a browser on the shop's page does.
func (h *harness) post(path, visitor string, form url.Values) resp {
	h.t.Helper()
	return h.request(http.MethodPost, path, strings.NewReader(form.Encode()),
		HeaderVisitor, visitor, HeaderEvent, testEvent,
		"Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Site", "same-origin")
}

var (
	csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	keyRe  = regexp.MustCompile(`name="key" value="([^"]+)"`)
)

// formFields returns the csrf token and form key a page rendered.
func formFields(t testing.TB, page string) (csrf, key string) {
	t.Helper()
	c := csrfRe.FindStringSubmatch(page)
	k := keyRe.FindStringSubmatch(page)
	if c == nil || k == nil {
		t.Fatalf("no csrf token or form key in the page:\n%s", page)
	}
	return c[1], k[1]
}

// holdForm renders the event page for visitor and returns a hold form
// filled from it, with the extra fields given.
func (h *harness) holdForm(visitor string, fields url.Values) url.Values {
	h.t.Helper()
	page := h.get("/events/"+testEvent, visitor)
	if page.status != http.StatusOK {
		h.t.Fatalf("event page: %d\n%s", page.status, page.body)
	}
	csrf, key := formFields(h.t, page.body)
	f := url.Values{"csrf": {csrf}, "key": {key}}
	for k, v := range fields {
		f[k] = v
	}
	return f
}

// holdSeats holds through the shop and returns the hold id.
func (h *harness) hold(visitor string, fields url.Values) string {
	h.t.Helper()
	r := h.post("/events/"+testEvent+"/hold", visitor, h.holdForm(visitor, fields))
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/checkout/") {
		h.t.Fatalf("hold %v: %d %q\n%s", fields, r.status, r.location(), r.body)
	}
	return strings.TrimPrefix(r.location(), "/checkout/")
}

// payForm renders the checkout of hold for visitor and returns its
// filled pay form.
func (h *harness) payForm(visitor, hold string) url.Values {
	h.t.Helper()
	page := h.get("/checkout/"+hold, visitor)
	if page.status != http.StatusOK {
		h.t.Fatalf("checkout page: %d\n%s", page.status, page.body)
	}
	csrf, key := formFields(h.t, page.body)
	return url.Values{"csrf": {csrf}, "key": {key}, "card_name": {"Demo Visitor"}, "card_number": {"4242 4242 4242 4242"},
		"card_expiry": {"12/34"}, "card_cvc": {"123"}}
}

// buy holds and pays, and returns the order id.
func (h *harness) buy(visitor string, fields url.Values) string {
	h.t.Helper()
	hold := h.hold(visitor, fields)
	r := h.post("/checkout/"+hold+"/pay", visitor, h.payForm(visitor, hold))
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/tickets/") {
		h.t.Fatalf("pay: %d %q\n%s", r.status, r.location(), r.body)
	}
	return strings.TrimPrefix(r.location(), "/tickets/")
}

func (h *harness) availability() inventory.Availability {
	h.t.Helper()
	a, err := h.inv.Availability(bg, testEvent)
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

// wantCounts checks the event's held and sold counts.
func (h *harness) wantCounts(held, sold int) {
	h.t.Helper()
	a := h.availability()
	if a.Held != held || a.Sold != sold {
		h.t.Fatalf("held %d, sold %d; want held %d, sold %d", a.Held, a.Sold, held, sold)
	}
}

// wantPage checks a status and that the body contains every string.
func wantPage(t *testing.T, r resp, status int, contains ...string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d\n%s", r.status, status, r.body)
	}
	for _, c := range contains {
		if !strings.Contains(r.body, c) {
			t.Fatalf("page lacks %q:\n%s", c, r.body)
		}
	}
}

// seats is a seat-picking form's fields.
func seats(ids ...string) url.Values { return url.Values{"mode": {modeSeats}, "seat": ids} }

func best(section string, n int) url.Values {
	return url.Values{"mode": {modeBest}, "section": {section}, "quantity": {strconv.Itoa(n)}}
}

func ga(pool string, n int) url.Values {
	return url.Values{"mode": {modeGA}, "pool": {pool}, "quantity": {strconv.Itoa(n)}}
}

// httptestServer serves s on a loopback port and returns its URL.
func httptestServer(t *testing.T, s *Shop) string {
	t.Helper()
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}
