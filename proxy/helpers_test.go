package proxy

import (
	"context"
	crand "crypto/rand"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/memstore"
	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
	"github.com/waitroom/waitroom/proxy/httpguard"
	"github.com/waitroom/waitroom/proxy/netlimit"
	"github.com/waitroom/waitroom/proxy/ratelimit"
	"github.com/waitroom/waitroom/proxy/upstream"
	"github.com/waitroom/waitroom/static"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// origin is a real fasthttp origin on loopback that records what it got.
type origin struct {
	addr string
	mu   sync.Mutex
	seen []seenRequest
	// handler, when set, answers instead of the default echo.
	handler fasthttp.RequestHandler
	// silent stops recording (which allocates), for allocation tests.
	silent atomic.Bool
}

type seenRequest struct {
	path, visitor, event, cookie, bypass, xff, authorization string
}

func startOrigin(t testing.TB) *origin {
	t.Helper()
	o := &origin{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.addr = ln.Addr().String()
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if o.silent.Load() {
			ctx.SetContentType("text/plain")
			ctx.WriteString("origin:")
			ctx.Write(ctx.Path())
			return
		}
		h := &ctx.Request.Header
		o.mu.Lock()
		o.seen = append(o.seen, seenRequest{path: string(ctx.Path()), visitor: string(h.Peek("X-Waitroom-Visitor")),
			event: string(h.Peek("X-Waitroom-Event")), cookie: string(h.Peek("Cookie")),
			bypass: string(h.Peek("X-Waitroom-Bypass")), xff: string(h.Peek("X-Forwarded-For")),
			authorization: string(h.Peek("Authorization"))})
		handler := o.handler
		o.mu.Unlock()
		if handler != nil {
			handler(ctx)
			return
		}
		ctx.SetContentType("text/plain")
		ctx.WriteString("origin:" + string(ctx.Path()))
	}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return o
}

func (o *origin) last(t testing.TB) seenRequest {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.seen) == 0 {
		t.Fatal("the origin saw no request")
	}
	return o.seen[len(o.seen)-1]
}

func (o *origin) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.seen)
}

// rig is a Proxy in front of a real origin, on a real engine with an
// embedded store, served on loopback.
type rig struct {
	clk    *fakeclock.Clock
	store  *memstore.Store
	engine *admission.Engine
	keys   *admission.Keyring
	origin *origin
	o      *upstream.Origin
	p      *Proxy
	reg    *prometheus.Registry
	url    string // http://127.0.0.1:port
	opts   Options
}

const testSecret = "0123456789abcdef0123456789abcdef-test-secret"

// event "show": queue open since t0-1h, on sale at t0+10s.
// testInviteSecret signs the invite codes of the show's presale lane.
var testInviteSecret = func() []byte {
	b := make([]byte, 32)
	crand.Read(b)
	return b
}()

func showEvent() admission.EventConfig {
	return admission.EventConfig{ID: "show", QueueOpensAt: t0.Add(-time.Hour), OnSaleAt: t0.Add(10 * time.Second),
		Controller: admission.ControllerConfig{InitialActive: 50},
		Lanes:      []admission.LaneConfig{{Name: "presale", Priority: true, Access: admission.LaneAccess{InviteSecret: testInviteSecret}}}}
}

type rigOption func(*Options)

func newRig(t testing.TB, opts ...rigOption) *rig {
	t.Helper()
	r := &rig{clk: fakeclock.New(t0), origin: startOrigin(t)}
	s, err := memstore.Open(memstore.Options{Dir: t.TempDir(), Clock: r.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r.store = s
	r.engine, err = admission.New(admission.Options{Store: s, Clock: r.clk.Now, Replica: "test", Logger: quiet,
		ShadowKey: []byte(testSecret)}, showEvent(),
		admission.EventConfig{ID: "other", QueueOpensAt: t0.Add(-time.Hour), OnSaleAt: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	r.keys, err = admission.NewKeyring(admission.Key{ID: "k1", Alg: "HS256", Secret: []byte(testSecret)})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := static.New([]static.PageConfig{{Event: "show", Name: "The Show", Prefix: "/_wr"},
		{Event: "other", Name: "Other", Prefix: "/_wr"}})
	if err != nil {
		t.Fatal(err)
	}
	r.o, err = upstream.New(upstream.Config{Name: "site", Addrs: []string{r.origin.addr}}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.o.Close)
	r.reg = prometheus.NewRegistry()
	budget, err := netlimit.NewBudget(1000, [netlimit.NumClasses]float64{netlimit.Admitted: 0.25, netlimit.API: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Budget: budget, Engine: r.engine, Keys: r.keys, Pages: pages, Origins: []*upstream.Origin{r.o},
		Routes: []Route{
			{Prefix: "/show/", Event: "show", Action: ActionQueue},
			{Prefix: "/checkout/", Event: "show", Action: ActionBlock},
			{Prefix: "/other/", Event: "other", Action: ActionQueue},
			{Glob: "/static/**", Action: ActionPass},
		},
		Events: []Event{{ID: "show", LandingPath: "/show/", PositionDisplay: PositionExact},
			{ID: "other", LandingPath: "/other/", PositionDisplay: PositionApproximate}},
		Binding: Binding{UserAgent: true}, Registerer: r.reg, Clock: r.clk.Now, Logger: quiet,
		Trusted: httpguard.NewTrusted(nil)}
	for _, f := range opts {
		f(&o)
	}
	r.p, err = New(o)
	if err != nil {
		t.Fatal(err)
	}
	r.opts = o
	t.Cleanup(func() { r.p.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := r.p.Server(ServerConfig{})
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	r.url = "http://" + ln.Addr().String()
	return r
}

func withLimiter(rate float64, burst int) rigOption {
	return func(o *Options) {
		l, err := ratelimit.New(ratelimit.Config{PerIP: ratelimit.Bucket{Rate: rate, Burst: burst}})
		if err != nil {
			panic(err)
		}
		o.Limiter = l
	}
}

func withBypass(cidrs []string, secret string) rigOption {
	return func(o *Options) {
		for _, c := range cidrs {
			o.Bypass.CIDRs = append(o.Bypass.CIDRs, netip.MustParsePrefix(c))
		}
		o.Bypass.Secret = secret
	}
}

// tick moves the clock to t0+d and runs the engine's tick.
func (r *rig) tick(t testing.TB, d time.Duration) {
	t.Helper()
	r.clk.Set(t0.Add(d))
	if err := r.engine.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// visitor is a browser: a cookie jar and a User-Agent.
type visitor struct {
	c  *http.Client
	ua string
}

func newVisitor(t testing.TB, ua string) *visitor {
	jar, _ := cookiejar.New(nil)
	return &visitor{ua: ua, c: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type response struct {
	status int
	header http.Header
	body   string
}

func (v *visitor) do(t testing.TB, method, u, body string, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", v.ua)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(header); i += 2 {
		// A name given twice is sent twice.
		if seen[http.CanonicalHeaderKey(header[i])] {
			req.Header.Add(header[i], header[i+1])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
		seen[http.CanonicalHeaderKey(header[i])] = true
	}
	resp, err := v.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func (v *visitor) cookie(u, name string) string {
	pu, _ := url.Parse(u)
	for _, c := range v.c.Jar.Cookies(pu) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

func secs(n int) time.Duration { return time.Duration(n) * time.Second }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var netipLoopback = netip.MustParseAddr("127.0.0.1")

// counterValue reads one series of a metric from reg (0 when absent).
func counterValue(t testing.TB, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue next
				}
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}
