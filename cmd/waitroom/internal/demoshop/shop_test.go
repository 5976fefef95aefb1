package demoshop

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
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

func TestHoldKinds(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name     string
		fields   url.Values
		contains []string
		held     int
	}{
		{"explicit seats", seats("lower-C-7", "lower-C-8"),
			[]string{"Lower bowl, row C, seat 7", "Lower bowl, row C, seat 8", "$178.00"}, 2},
		{"best available", best("upper", 3),
			[]string{"Upper tier, row K, seat 11", "Upper tier, row K, seat 12", "Upper tier, row K, seat 13", "$147.00"}, 3},
		{"general admission", ga("floor", 4), []string{"4 × Floor (standing)", "$260.00"}, 4},
	}
	total := 0
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			visitor := "visitor-" + string(rune('a'+i))
			hold := h.hold(visitor, tt.fields)
			total += tt.held
			r := h.get("/checkout/"+hold, visitor)
			wantPage(t, r, http.StatusOK, append(tt.contains, "Checkout", "no payment is taken",
				`data-seconds="180">3:00<`, `datetime="2030-05-01T18:03:00Z"`, "/static/countdown.js")...)
			g, err := h.inv.GetHold(bg, testEvent, hold)
			if err != nil || g.User != visitor || g.Status != inventory.HoldHeld || !g.ExpiresAt.Equal(h.clock.Now().Add(DefaultHoldTTL)) {
				t.Fatalf("hold %+v, %v", g, err)
			}
		})
	}
	h.wantCounts(total, 0)
}

func TestHoldDoubleSubmitHoldsOnce(t *testing.T) {
	h := newHarness(t)
	f := h.holdForm("alice", best("lower", 2))
	var locs []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			r := h.post("/events/"+testEvent+"/hold", "alice", f)
			mu.Lock()
			defer mu.Unlock()
			if r.status != http.StatusSeeOther {
				t.Errorf("status %d\n%s", r.status, r.body)
			}
			locs = append(locs, r.location())
		})
	}
	wg.Wait()
	if locs[0] != locs[1] || locs[1] != locs[2] {
		t.Fatalf("three submits of one form went to %v", locs)
	}
	h.wantCounts(2, 0)

	// The same form sent with another choice is a new hold.
	f.Set("quantity", "1")
	r := h.post("/events/"+testEvent+"/hold", "alice", f)
	if r.status != http.StatusSeeOther || r.location() == locs[0] {
		t.Fatalf("second choice: %d %q", r.status, r.location())
	}
	h.wantCounts(3, 0)
}

func TestHoldRefusals(t *testing.T) {
	h := newHarness(t)
	h.hold("bob", seats("lower-A-5", "lower-A-6"))
	h.hold("limit", ga("floor", 5))
	tests := []struct {
		name     string
		visitor  string
		fields   url.Values
		status   int
		contains []string
		absent   []string
	}{
		{"seats taken", "alice", seats("lower-A-4", "lower-A-5", "lower-A-6"), http.StatusConflict,
			[]string{"Sorry, those seats were just taken", "Lower bowl, row A, seat 5", "Lower bowl, row A, seat 6",
				`value="lower-A-4" aria-label="Row A, seat 4, available" checked>`, "Seat map: Lower bowl"},
			[]string{"Lower bowl, row A, seat 4</li>"}},
		{"one seat taken", "alice", seats("lower-A-5"), http.StatusConflict,
			[]string{"Sorry, that seat was just taken", "Lower bowl, row A, seat 5"}, nil},
		{"no such seat", "alice", seats("lower-Z-1", "lower-A-99"), http.StatusUnprocessableEntity,
			[]string{"No such seat", "Lower bowl, row Z, seat 1", "Lower bowl, row A, seat 99"}, nil},
		{"user limit", "limit", ga("floor", 2), http.StatusConflict,
			[]string{"Ticket limit reached", "at most 6 tickets", "you have 5", "You can add 1 more."}, nil},
		{"no seats ticked", "alice", seats(), http.StatusUnprocessableEntity,
			[]string{"Please check your choice", "Tick at least one seat"}, nil},
		{"bad seat id", "alice", seats("<b>x</b>"), http.StatusUnprocessableEntity,
			[]string{"not a seat of this venue"}, []string{"<b>x</b>"}},
		{"unknown section", "alice", best("vip", 2), http.StatusUnprocessableEntity, []string{"Choose a section."}, nil},
		{"bad quantity", "alice", best("lower", 0), http.StatusUnprocessableEntity, []string{"Choose how many seats"}, nil},
		{"no mode", "alice", url.Values{}, http.StatusUnprocessableEntity, []string{"Choose seats on the map"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.post("/events/"+testEvent+"/hold", tt.visitor, h.holdForm(tt.visitor, tt.fields))
			wantPage(t, r, tt.status, append(tt.contains, `role="alert"`)...)
			for _, a := range tt.absent {
				if strings.Contains(r.body, a) {
					t.Fatalf("page contains %q:\n%s", a, r.body)
				}
			}
		})
	}
	h.wantCounts(2+5, 0)
}

func TestNotEnoughLeft(t *testing.T) {
	h := newHarness(t)
	// Other buyers (straight through the sidecar, at most 6 each) take
	// every other seat of the upper tier, so no two free seats are next
	// to each other, and all but 3 standing tickets.
	n := 0
	take := func(req inventory.HoldRequest) {
		t.Helper()
		n++
		req.User = "filler-" + strconv.Itoa(n)
		if _, err := h.inv.Hold(bg, testEvent, req); err != nil {
			t.Fatal(err)
		}
	}
	for _, row := range Plan().Sections[1].Rows {
		var ids []string
		for seat := 2; seat <= row.Seats; seat += 2 {
			ids = append(ids, inventory.SeatID("upper", row.ID, seat))
			if len(ids) == 6 {
				take(inventory.HoldRequest{Seats: ids})
				ids = nil
			}
		}
	}
	for range 97 / 6 {
		take(inventory.HoldRequest{GA: &inventory.GARequest{Pool: "floor", Quantity: 6}})
	}
	take(inventory.HoldRequest{GA: &inventory.GARequest{Pool: "floor", Quantity: 97 % 6}})

	tests := []struct {
		name     string
		fields   url.Values
		contains []string
	}{
		{"best available", best("upper", 2), []string{"Not enough seats together",
			"We could not find 2 seats next to each other in Upper tier (120 seats are left there)."}},
		{"standing", ga("floor", 4), []string{"Not enough tickets left", "Only 3 tickets are left for Floor (standing)."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.post("/events/"+testEvent+"/hold", "alice", h.holdForm("alice", tt.fields))
			wantPage(t, r, http.StatusConflict, tt.contains...)
		})
	}
	h.wantCounts(120+97, 0)
	// One seat alone is still there.
	h.hold("alice", best("upper", 1))
}

func TestPay(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", seats("lower-D-1", "lower-D-2"))
	f := h.payForm("alice", hold)

	// A double submit: both answers lead to the one order.
	var wg sync.WaitGroup
	results := make([]resp, 2)
	for i := range results {
		wg.Go(func() { results[i] = h.post("/checkout/"+hold+"/pay", "alice", f) })
	}
	wg.Wait()
	for _, r := range results {
		if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/tickets/ord_") {
			t.Fatalf("pay: %d %q\n%s", r.status, r.location(), r.body)
		}
		if r.header.Get(HeaderComplete) != "1" {
			t.Fatalf("no %s on a successful payment", HeaderComplete)
		}
	}
	if results[0].location() != results[1].location() {
		t.Fatalf("a double submit made two orders: %s, %s", results[0].location(), results[1].location())
	}
	order := strings.TrimPrefix(results[0].location(), "/tickets/")
	h.wantCounts(0, 2)

	o, err := h.inv.GetOrder(bg, testEvent, order)
	if err != nil || o.User != "alice" || o.HoldID != hold || o.PriceCents != 17800 || o.Status != inventory.OrderConfirmed {
		t.Fatalf("order %+v, %v", o, err)
	}
	// The second submit was charged too when it read the hold before the
	// first confirmed it, with the same key: one payment either way.
	charges, refunds := h.pay.calls()
	if len(charges) < 1 || len(charges) > 2 || charges[0].Key != charges[len(charges)-1].Key ||
		charges[0].AmountCents != 17800 || len(refunds) != 0 {
		t.Fatalf("charges %+v, refunds %+v", charges, refunds)
	}
	if !strings.HasPrefix(o.PaymentRef, "demo_pay_") {
		t.Fatalf("payment ref %q", o.PaymentRef)
	}
	confirms := 0
	p, _ := h.inv.Audit(bg, testEvent, "", inventory.MaxAuditPage)
	for _, e := range p.Entries {
		if e.Action == inventory.ActionConfirm {
			confirms++
		}
	}
	if confirms != 1 {
		t.Fatalf("%d confirms in the audit stream", confirms)
	}

	// A retry later (the answer was lost) gets the same order again.
	r := h.post("/checkout/"+hold+"/pay", "alice", f)
	if r.status != http.StatusSeeOther || r.location() != results[0].location() {
		t.Fatalf("retry: %d %q", r.status, r.location())
	}
	// And the checkout of a paid hold shows the ticket.
	if r := h.get("/checkout/"+hold, "alice"); r.status != http.StatusSeeOther || r.location() != "/tickets/"+order {
		t.Fatalf("checkout of a paid hold: %d %q", r.status, r.location())
	}
	if !strings.Contains(h.logs.String(), "fake payment taken") {
		t.Fatal("the fake payment was not logged")
	}
}

func TestPayFromTwoTabsChargesOnce(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", ga("floor", 2))
	tab1, tab2 := h.payForm("alice", hold), h.payForm("alice", hold)
	if tab1.Get("key") == tab2.Get("key") {
		t.Fatal("two renders of the checkout share a form key")
	}
	r1 := h.post("/checkout/"+hold+"/pay", "alice", tab1)
	// The second tab's hold is confirmed by now: the page sends it to the
	// ticket without charging.
	r2 := h.post("/checkout/"+hold+"/pay", "alice", tab2)
	if r1.location() == "" || r1.location() != r2.location() {
		t.Fatalf("two tabs: %q, %q", r1.location(), r2.location())
	}
	charges, refunds := h.pay.calls()
	if len(charges) != 1 || len(refunds) != 0 {
		t.Fatalf("charges %+v, refunds %+v", charges, refunds)
	}
	h.wantCounts(0, 2)
}

func TestPayRacingTabsRefundsTheLoser(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", ga("floor", 1))
	tab1, tab2 := h.payForm("alice", hold), h.payForm("alice", hold)
	// Tab 2 is paid for while tab 1's payment is being taken: the hold
	// is confirmed once, and tab 1's charge is refunded.
	h.pay.setHook(func() {
		h.pay.setHook(nil)
		r := h.post("/checkout/"+hold+"/pay", "alice", tab2)
		if r.status != http.StatusSeeOther {
			t.Errorf("tab 2: %d\n%s", r.status, r.body)
		}
	})
	r := h.post("/checkout/"+hold+"/pay", "alice", tab1)
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/tickets/") {
		t.Fatalf("tab 1: %d %q\n%s", r.status, r.location(), r.body)
	}
	charges, refunds := h.pay.calls()
	if len(charges) != 2 || len(refunds) != 1 || refunds[0].Reason != "the hold was already paid for" || refunds[0].AmountCents != 6500 {
		t.Fatalf("charges %+v, refunds %+v", charges, refunds)
	}
	o, err := h.inv.GetOrder(bg, testEvent, strings.TrimPrefix(r.location(), "/tickets/"))
	if err != nil || o.PaymentRef == refunds[0].Ref {
		t.Fatalf("order %+v, %v: the refunded payment is the order's", o, err)
	}
	h.wantCounts(0, 1)
}

func TestDoubleSubmitWithDistinctPaymentRefs(t *testing.T) {
	h := newHarness(t)
	h.pay.distinctRefs = true
	hold := h.hold("alice", seats("upper-M-1", "upper-M-2"))
	f := h.payForm("alice", hold)
	// The second submit of the same form overtakes the first while the
	// first is being charged: one key, two payment references.
	var second resp
	h.pay.setHook(func() {
		h.pay.setHook(nil)
		second = h.post("/checkout/"+hold+"/pay", "alice", f)
	})
	first := h.post("/checkout/"+hold+"/pay", "alice", f)
	for _, r := range []resp{first, second} {
		if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/tickets/") || r.header.Get(HeaderComplete) != "1" {
			t.Fatalf("pay: %d %q\n%s", r.status, r.location(), r.body)
		}
	}
	if first.location() != second.location() {
		t.Fatalf("two orders: %s, %s", first.location(), second.location())
	}
	charges, refunds := h.pay.calls()
	o, err := h.inv.GetOrder(bg, testEvent, strings.TrimPrefix(first.location(), "/tickets/"))
	if err != nil || len(charges) != 2 || len(refunds) != 1 || refunds[0].Ref == o.PaymentRef || refunds[0].AmountCents != 9800 {
		t.Fatalf("order %+v (%v), charges %+v, refunds %+v", o, err, charges, refunds)
	}
	h.wantCounts(0, 2)
}

func TestHoldExpiresWhilePaying(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", seats("lower-E-10", "lower-E-11"))
	f := h.payForm("alice", hold)
	// The payment takes longer than the hold lasts.
	h.pay.setHook(func() { h.clock.Add(DefaultHoldTTL + time.Second) })
	r := h.post("/checkout/"+hold+"/pay", "alice", f)
	wantPage(t, r, http.StatusConflict, "Your hold expired while you paid", "The payment of $178.00 was refunded",
		"18:03:00 UTC", `href="/events/demo-concert"`)
	if r.header.Get(HeaderComplete) != "" {
		t.Fatalf("%s on a failed payment", HeaderComplete)
	}
	charges, refunds := h.pay.calls()
	if len(charges) != 1 || len(refunds) != 1 || refunds[0].AmountCents != 17800 || refunds[0].Reason != "hold_expired" {
		t.Fatalf("charges %+v, refunds %+v", charges, refunds)
	}
	h.wantCounts(0, 0)
	if g, _ := h.inv.GetHold(bg, testEvent, hold); g.Status != inventory.HoldExpired {
		t.Fatalf("hold status %s", g.Status)
	}
	if !strings.Contains(h.logs.String(), "fake payment refunded") {
		t.Fatal("the refund was not logged")
	}

	// The seats are for sale again.
	h.pay.setHook(nil)
	h.buy("bob", seats("lower-E-10", "lower-E-11"))
}

func TestPayAfterExpiryChargesNothing(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", ga("floor", 1))
	f := h.payForm("alice", hold)
	h.clock.Add(DefaultHoldTTL)
	wantPage(t, h.post("/checkout/"+hold+"/pay", "alice", f), http.StatusGone, "Your hold has expired", "Nothing was charged")
	wantPage(t, h.get("/checkout/"+hold, "alice"), http.StatusGone, "Your hold has expired")
	if charges, _ := h.pay.calls(); len(charges) != 0 {
		t.Fatalf("charged %+v", charges)
	}
	h.wantCounts(0, 0)
}

func TestCheckoutCountdown(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", ga("floor", 1))
	h.clock.Add(100*time.Second + 500*time.Millisecond)
	wantPage(t, h.get("/checkout/"+hold, "alice"), http.StatusOK, `data-seconds="80">1:20<`)
}

func TestRelease(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", seats("upper-T-1", "upper-T-2"))
	csrf, _ := formFields(t, h.get("/checkout/"+hold, "alice").body)
	r := h.post("/checkout/"+hold+"/release", "alice", url.Values{"csrf": {csrf}})
	if r.status != http.StatusSeeOther || r.location() != "/events/demo-concert?notice=released" {
		t.Fatalf("release: %d %q", r.status, r.location())
	}
	h.wantCounts(0, 0)
	page := h.get(r.location(), "alice")
	wantPage(t, page, http.StatusOK, "Your seats were released and are back on sale.")
	if strings.Contains(page.body, "Held for you") {
		t.Fatal("a released hold is offered for checkout")
	}
	wantPage(t, h.get("/checkout/"+hold, "alice"), http.StatusGone, "These seats were released")
	// Releasing again changes nothing and says so the same way.
	if r := h.post("/checkout/"+hold+"/release", "alice", url.Values{"csrf": {csrf}}); r.status != http.StatusSeeOther {
		t.Fatalf("second release: %d", r.status)
	}
}

func TestTicketAndCancel(t *testing.T) {
	h := newHarness(t)
	order := h.buy("alice", seats("lower-J-20"))

	page := h.get("/tickets/"+order, "") // by its link alone
	code := h.shop.TicketCode(order)
	qr, err := qrSVG(code)
	if err != nil {
		t.Fatal(err)
	}
	wantPage(t, page, http.StatusOK, "Your tickets", "Lower bowl, row J, seat 20", "$89.00", string(qr),
		"<code>"+code+"</code>", `href="/events/demo-concert/orders/`+order+`"`, "cannot be guessed")
	if !regexp.MustCompile(`^WRDEMO:demo-concert:ord_[a-z2-7]{26}:[A-Za-z0-9_-]{22}$`).MatchString(code) {
		t.Fatalf("ticket code %q", code)
	}
	if got, err := h.shop.VerifyTicket(code); err != nil || got != order {
		t.Fatalf("VerifyTicket: %q, %v", got, err)
	}

	manage := h.get("/events/"+testEvent+"/orders/"+order, "alice")
	wantPage(t, manage, http.StatusOK, "Cancel the order and refund", "refunds $89.00")
	csrf := csrfRe.FindStringSubmatch(manage.body)[1]
	r := h.post("/events/"+testEvent+"/orders/"+order+"/cancel", "alice", url.Values{"csrf": {csrf}})
	if r.status != http.StatusSeeOther || r.location() != "/tickets/"+order+"?notice=cancelled" {
		t.Fatalf("cancel: %d %q\n%s", r.status, r.location(), r.body)
	}
	h.wantCounts(0, 0)
	_, refunds := h.pay.calls()
	if len(refunds) != 1 || refunds[0].AmountCents != 8900 || refunds[0].Ref == "" {
		t.Fatalf("refunds %+v", refunds)
	}
	page = h.get(r.location(), "")
	wantPage(t, page, http.StatusOK, "This order was cancelled", "Your order was cancelled and the payment refunded.")
	if strings.Contains(page.body, "<svg") || strings.Contains(page.body, "WRDEMO:") {
		t.Fatal("a cancelled order still shows its QR code")
	}
	// Cancelling twice refunds once.
	if r := h.post("/events/"+testEvent+"/orders/"+order+"/cancel", "alice", url.Values{"csrf": {csrf}}); r.status != http.StatusSeeOther {
		t.Fatalf("second cancel: %d", r.status)
	}
	if _, refunds := h.pay.calls(); len(refunds) != 1 {
		t.Fatalf("refunds %+v", refunds)
	}
	wantPage(t, h.get("/events/"+testEvent+"/orders/"+order, "alice"), http.StatusOK, "This order is cancelled")
}

func TestOthersCannotSeeOrTouch(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", seats("lower-F-1"))
	order := h.buy("alice", seats("lower-F-5"))
	malloryCSRF := h.shop.csrfToken("mallory")
	form := url.Values{"csrf": {malloryCSRF}, "key": {newFormKey()}}
	tests := []struct {
		name, method, path string
	}{
		{"see the checkout", "GET", "/checkout/" + hold},
		{"pay the hold", "POST", "/checkout/" + hold + "/pay"},
		{"release the hold", "POST", "/checkout/" + hold + "/release"},
		{"see the order page", "GET", "/events/" + testEvent + "/orders/" + order},
		{"cancel the order", "POST", "/events/" + testEvent + "/orders/" + order + "/cancel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r resp
			if tt.method == "GET" {
				r = h.get(tt.path, "mallory")
			} else {
				r = h.post(tt.path, "mallory", form)
			}
			wantPage(t, r, http.StatusNotFound, "Page not found")
			if strings.Contains(r.body, "lower-F") || strings.Contains(r.body, "row F") {
				t.Fatalf("the page shows alice's seats:\n%s", r.body)
			}
		})
	}
	h.wantCounts(1, 1)
	if charges, _ := h.pay.calls(); len(charges) != 1 {
		t.Fatalf("charges %+v", charges)
	}
	// The ticket page is reachable by its link, by anyone.
	wantPage(t, h.get("/tickets/"+order, "mallory"), http.StatusOK, "Lower bowl, row F, seat 5")
	// And mallory's event page does not offer alice's hold.
	if r := h.get("/events/"+testEvent, "mallory"); strings.Contains(r.body, "Held for you") {
		t.Fatal("another visitor's hold is offered")
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
