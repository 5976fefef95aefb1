package demoshop

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
)

func TestNewRefusesBadOptions(t *testing.T) {
	inv := client.New("http://127.0.0.1:1", "t")
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no inventory", Options{Event: "ev"}, "Inventory"},
		{"no event", Options{Inventory: inv}, "Event"},
		{"bad event", Options{Inventory: inv, Event: "a/b"}, "Event"},
		{"negative ttl", Options{Inventory: inv, Event: "ev", HoldTTL: -time.Second}, "HoldTTL"},
		{"session script elsewhere", Options{Inventory: inv, Event: "ev", SessionScript: "//evil.example/x.js"}, "SessionScript"},
		{"session script URL", Options{Inventory: inv, Event: "ev", SessionScript: "https://evil.example/x.js"}, "SessionScript"},
		{"session script with a space", Options{Inventory: inv, Event: "ev", SessionScript: "/_wr/session.js x"}, "SessionScript"},
		{"sub-millisecond ttl", Options{Inventory: inv, Event: "ev", HoldTTL: time.Second + time.Microsecond}, "HoldTTL"},
		{"ttl too long", Options{Inventory: inv, Event: "ev", HoldTTL: inventory.MaxHoldTTL + time.Second}, "HoldTTL"},
		{"short secret", Options{Inventory: inv, Event: "ev", Secret: []byte("short")}, "Secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want ErrInvalidOptions about %s", err, tt.want)
			}
		})
	}
	s, err := New(Options{Inventory: inv, Event: "ev"})
	if err != nil {
		t.Fatal(err)
	}
	if s.name != DefaultName || s.venue != DefaultVenue || s.holdTTL != DefaultHoldTTL || len(s.secret) != 32 {
		t.Fatalf("defaults not applied: %q %q %s %d", s.name, s.venue, s.holdTTL, len(s.secret))
	}
}

func TestSetupIsIdempotent(t *testing.T) {
	h := newHarness(t)
	ev, err := h.inv.Event(bg, testEvent)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Seats != 10*20+10*24 || ev.GACapacity != 100 || ev.Limits.PerUser != 6 ||
		ev.HoldTTLSeconds != int(DefaultHoldTTL/time.Second) {
		t.Fatalf("defined %+v", ev)
	}
	h.hold("alice", seats("lower-A-1"))

	// Setup again, and as a restarted shop over the same sidecar: the
	// event and its hold are kept.
	if err := h.shop.Setup(bg); err != nil {
		t.Fatal(err)
	}
	again, err := New(Options{Inventory: h.inv, Event: testEvent, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Setup(bg); err != nil {
		t.Fatal(err)
	}
	h.wantCounts(1, 0)
	if !strings.Contains(h.logs.String(), "keeping the existing event") {
		t.Fatalf("second Setup did not say it kept the event:\n%s", h.logs.String())
	}

	// An event someone else defined is kept as it is, too.
	custom := inventory.EventDef{GA: []inventory.Pool{{ID: "lawn", Capacity: 5, PriceCents: 100}}}
	if _, err := h.inv.PutEvent(bg, "other", custom, "test"); err != nil {
		t.Fatal(err)
	}
	other, err := New(Options{Inventory: h.inv, Event: "other", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Setup(bg); err != nil {
		t.Fatal(err)
	}
	if ev, _ := h.inv.Event(bg, "other"); ev.GACapacity != 5 || len(ev.Sections) != 0 {
		t.Fatalf("Setup replaced an existing event: %+v", ev)
	}
}

func TestSetupFailsWithoutSidecar(t *testing.T) {
	h := newHarness(t)
	h.sc.stop()
	s, err := New(Options{Inventory: h.inv, Event: "fresh", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(bg); err == nil {
		t.Fatal("Setup succeeded with the sidecar down")
	}
}

func TestPassRoutes(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name, path string
		status     int
		ctype      string
		contains   []string
	}{
		{"home", "/", 200, "text/html; charset=utf-8",
			[]string{DefaultName, `href="/events/demo-concert"`, "Get tickets", "540 of 540 tickets left, from $49.00", "Friday 31 May 2030, 20:00 UTC"}},
		{"healthz", "/healthz", 200, "text/plain; charset=utf-8", []string{"ok"}},
		{"stylesheet", "/static/demoshop.css", 200, "text/css; charset=utf-8", []string{".seat"}},
		{"script", "/static/countdown.js", 200, "text/javascript; charset=utf-8", []string{"countdown"}},
		{"missing asset", "/static/nope.css", 404, "text/html; charset=utf-8", []string{"Page not found"}},
		{"escaped slash", "/static/..%2fshop.go", 404, "text/html; charset=utf-8", []string{"Page not found"}},
		{"unknown path", "/admin", 404, "text/html; charset=utf-8", []string{"Page not found"}},
		{"bad ticket id", "/tickets/..%2f..", 404, "text/html; charset=utf-8", []string{"Page not found"}},
		{"unknown ticket", "/tickets/ord_nope", 404, "text/html; charset=utf-8", []string{"Page not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.get(tt.path, "")
			wantPage(t, r, tt.status, tt.contains...)
			if ct := r.header.Get("Content-Type"); ct != tt.ctype {
				t.Fatalf("Content-Type %q, want %q", ct, tt.ctype)
			}
			if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
				t.Fatalf("CSP %q", csp)
			}
			if rp := r.header.Get("Referrer-Policy"); rp != "no-referrer" {
				t.Fatalf("Referrer-Policy %q", rp)
			}
		})
	}
}

func TestSidecarDown(t *testing.T) {
	h := newHarness(t)
	h.sc.stop()
	t.Run("healthz", func(t *testing.T) {
		wantPage(t, h.get("/healthz", ""), http.StatusServiceUnavailable, "sidecar unavailable")
	})
	t.Run("home still renders", func(t *testing.T) {
		r := h.get("/", "")
		wantPage(t, r, http.StatusOK, "Get tickets")
		if strings.Contains(r.body, "tickets left") {
			t.Fatalf("home shows figures it could not have:\n%s", r.body)
		}
	})
	t.Run("event page", func(t *testing.T) {
		r := h.get("/events/"+testEvent, "alice")
		wantPage(t, r, http.StatusServiceUnavailable, "The ticket system is busy")
		for _, leak := range []string{"127.0.0.1", "refused", "dial", "client:"} {
			if strings.Contains(r.body, leak) {
				t.Fatalf("the page shows internal error text %q:\n%s", leak, r.body)
			}
		}
		if !strings.Contains(h.logs.String(), "the sidecar call failed") {
			t.Fatal("the failure was not logged")
		}
	})
}

func TestGatedPagesNeedTheWaitingRoom(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", seats("lower-B-3"))
	csrf := h.shop.csrfToken("alice")
	paths := []struct{ method, path string }{
		{"GET", "/events/" + testEvent},
		{"POST", "/events/" + testEvent + "/hold"},
		{"GET", "/checkout/" + hold},
		{"POST", "/checkout/" + hold + "/pay"},
		{"POST", "/checkout/" + hold + "/release"},
		{"GET", "/events/" + testEvent + "/orders/ord_x"},
	}
	headers := []struct {
		name    string
		headers []string
		want    string
	}{
		{"no headers", nil, "Please come through the waiting room"},
		{"visitor only", []string{HeaderVisitor, "alice"}, "Please come through the waiting room"},
		{"event only", []string{HeaderEvent, testEvent}, "Please come through the waiting room"},
		{"two visitors", []string{HeaderVisitor, "alice", HeaderVisitor, "bob", HeaderEvent, testEvent}, "Please come through the waiting room"},
		{"visitor with a space", []string{HeaderVisitor, "ali ce", HeaderEvent, testEvent}, "Please come through the waiting room"},
		{"visitor too long", []string{HeaderVisitor, strings.Repeat("a", inventory.MaxUserLen+1), HeaderEvent, testEvent}, "Please come through the waiting room"},
		{"another event", []string{HeaderVisitor, "alice", HeaderEvent, "other-event"}, "Your pass is for another event"},
	}
	for _, p := range paths {
		for _, hd := range headers {
			t.Run(p.method+" "+p.path+"/"+hd.name, func(t *testing.T) {
				body := strings.NewReader(url.Values{"csrf": {csrf}, "key": {newFormKey()}, "mode": {"seats"}, "seat": {"lower-A-1"}}.Encode())
				hs := append([]string{"Content-Type", "application/x-www-form-urlencoded"}, hd.headers...)
				r := h.request(p.method, p.path, body, hs...)
				wantPage(t, r, http.StatusForbidden, hd.want)
			})
		}
	}
	h.wantCounts(1, 0)
	t.Run("another event in the path", func(t *testing.T) {
		wantPage(t, h.get("/events/other-event", "alice"), http.StatusNotFound, "Page not found")
	})
}

func TestEventPage(t *testing.T) {
	h := newHarness(t)
	h.hold("bob", seats("upper-K-1"))
	hold := h.hold("alice", seats("upper-K-2", "upper-K-3"))
	gaHold := h.hold("alice", ga("floor", 2))
	h.buy("carol", seats("upper-L-5"))

	r := h.get("/events/"+testEvent+"?section=upper", "alice")
	wantPage(t, r, http.StatusOK,
		"Seat map: Upper tier", "$49.00 a seat", `aria-current="page">Upper tier`,
		`value="upper-K-4" aria-label="Row K, seat 4, available">`,
		`value="upper-K-1" aria-label="Row K, seat 1, held by someone else" disabled>`,
		`value="upper-K-2" aria-label="Row K, seat 2, held for you" disabled>`,
		`value="upper-L-5" aria-label="Row L, seat 5, sold" disabled>`,
		`<label class="seat mine">`, `<label class="seat sold">`,
		"Held for you", "Upper tier, row K, seat 2", `href="/checkout/`+hold+`"`, "3:00 left to pay",
		"2 × Floor (standing)", `href="/checkout/`+gaHold+`"`,
		"98 of 100", "236 of 240", "Best available seats", "Get standing tickets")
	if n := strings.Count(r.body, `name="seat"`); n != 240 {
		t.Fatalf("the upper tier map has %d seats, want 240", n)
	}

	// A hold that ended is no longer offered; the other one still is.
	if _, err := h.inv.Release(bg, testEvent, gaHold, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	r = h.get("/events/"+testEvent, "alice")
	wantPage(t, r, http.StatusOK, `href="/checkout/`+hold+`"`)
	if strings.Contains(r.body, gaHold) {
		t.Fatal("a released hold is still offered")
	}

	// Without ?section= the first section is shown; an unknown one is
	// ignored, not reflected.
	for _, q := range []string{"", "?section=nope%3Cscript%3E"} {
		r := h.get("/events/"+testEvent+q, "dave")
		wantPage(t, r, http.StatusOK, "Seat map: Lower bowl")
		if strings.Contains(r.body, "<script>") || strings.Contains(r.body, "Held for you") {
			t.Fatalf("unexpected content for %q:\n%s", q, r.body)
		}
	}
}

func TestCSRF(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", ga("floor", 1))
	good := h.holdForm("alice", seats("lower-G-1"))
	with := func(k, v string) url.Values {
		f := url.Values{}
		for key, vals := range good {
			f[key] = slices.Clone(vals)
		}
		if v == "" {
			f.Del(k)
		} else {
			f.Set(k, v)
		}
		return f
	}
	tests := []struct {
		name    string
		form    url.Values
		headers []string
		status  int
	}{
		{"no token", with("csrf", ""), nil, http.StatusForbidden},
		{"wrong token", with("csrf", "AAAA"), nil, http.StatusForbidden},
		{"another visitor's token", with("csrf", h.shop.csrfToken("mallory")), nil, http.StatusForbidden},
		{"token twice", func() url.Values { f := with("x", ""); f.Add("csrf", f.Get("csrf")); return f }(), nil, http.StatusForbidden},
		{"cross-site", good, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"not a form", good, []string{"Content-Type", "text/plain"}, http.StatusUnsupportedMediaType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := []string{HeaderVisitor, "alice", HeaderEvent, testEvent}
			ctype := "application/x-www-form-urlencoded"
			for i := 0; i+1 < len(tt.headers); i += 2 {
				if tt.headers[i] == "Content-Type" {
					ctype = tt.headers[i+1]
				} else {
					hs = append(hs, tt.headers[i], tt.headers[i+1])
				}
			}
			hs = append(hs, "Content-Type", ctype)
			for _, path := range []string{"/events/" + testEvent + "/hold", "/checkout/" + hold + "/pay", "/checkout/" + hold + "/release"} {
				r := h.request(http.MethodPost, path, strings.NewReader(tt.form.Encode()), hs...)
				if r.status != tt.status {
					t.Fatalf("%s: status %d, want %d\n%s", path, r.status, tt.status, r.body)
				}
			}
		})
	}
	t.Run("oversized form", func(t *testing.T) {
		f := with("pad", strings.Repeat("x", maxFormBytes))
		wantPage(t, h.post("/events/"+testEvent+"/hold", "alice", f), http.StatusRequestEntityTooLarge, "could not be read")
	})
	h.wantCounts(1, 0)
	if charges, _ := h.pay.calls(); len(charges) != 0 {
		t.Fatalf("charged %+v", charges)
	}
	// The good form still works, from the same site.
	if r := h.post("/events/"+testEvent+"/hold", "alice", good); r.status != http.StatusSeeOther {
		t.Fatalf("good form: %d\n%s", r.status, r.body)
	}
}

func TestPagesEscapeOutput(t *testing.T) {
	h := newHarness(t)
	s, err := New(Options{Inventory: h.inv, Event: testEvent, Name: `<script>alert("x")</script>`,
		Venue: `"><img src=x>`, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Clock: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptestServer(t, s)
	for _, path := range []string{"/", "/nope"} {
		res, err := http.Get(srv + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(b), "<script>alert") || strings.Contains(string(b), `"><img`) {
			t.Fatalf("%s: unescaped output:\n%s", path, b)
		}
		if !strings.Contains(string(b), "&lt;script&gt;") {
			t.Fatalf("%s: name not shown escaped:\n%s", path, b)
		}
	}
}
