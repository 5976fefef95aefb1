package demoshop

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
)

// Headers shared with the proxy. They are a contract: the proxy sets
// HeaderVisitor and HeaderEvent on gated requests from a verified pass
// (and strips any a client sends), and reads HeaderComplete from the
// origin's answer.
const (
	// HeaderVisitor carries the visitor id of the pass.
	HeaderVisitor = "X-Waitroom-Visitor"
	// HeaderEvent carries the waiting-room event of the pass.
	HeaderEvent = "X-Waitroom-Event"
	// HeaderComplete: 1 on an answer tells the proxy that the visitor is
	// done (here: paid), which frees a place for the queue.
	HeaderComplete = "X-Waitroom-Complete"
)

// Defaults of Options.
const (
	DefaultName    = "waitroom demo concert"
	DefaultVenue   = "The Demo Arena"
	DefaultHoldTTL = 3 * time.Minute
	// DefaultRecentHolds bounds how many visitors' recent holds the shop
	// remembers (to offer "continue to checkout" on the event page).
	DefaultRecentHolds = 10_000
	// recentPerVisitor bounds the holds remembered for one visitor.
	recentPerVisitor = 6
)

// Timeouts of the shop's calls to the sidecar. Paying gets longer: it
// takes the (fake) payment and confirms, and is not abandoned when the
// browser goes away mid-way.
const (
	callTimeout = 5 * time.Second
	payTimeout  = 15 * time.Second
)

// actor names the shop in the sidecar's audit stream.
const actor = "demoshop"

// ErrInvalidOptions is wrapped by New's error when Options are unusable.
var ErrInvalidOptions = errors.New("demoshop: invalid options")

// Options configure a Shop; New reads them once.
type Options struct {
	// Inventory is the seat-hold sidecar, through the Go client. Required.
	Inventory *client.Client
	// Event is the inventory event id, e.g. "demo-concert"; it must equal
	// the waiting-room event id, which the proxy sends in HeaderEvent.
	Event string
	// Name is the event's title; DefaultName when empty.
	Name string
	// Venue is where it takes place; DefaultVenue when empty.
	Venue string
	// Date is when it takes place; when zero, 30 days after New at 20:00
	// UTC.
	Date time.Time
	// HoldTTL is how long seats stay held during checkout; DefaultHoldTTL
	// when 0. It must be a whole number of milliseconds.
	HoldTTL time.Duration
	// Secret keys the CSRF tokens and the ticket codes' HMAC (at least 16
	// bytes). When empty a random secret is made, so forms rendered and
	// ticket codes issued before a restart stop verifying after it.
	Secret []byte
	// Payments takes and refunds payments; FakePayments (which moves no
	// money and logs) when nil.
	Payments Payments
	// Logger receives what went wrong (with the error text that pages
	// never show) and the fake payments; slog.Default when nil.
	Logger *slog.Logger
	// Clock returns the current time (for the checkout countdown and the
	// default Date); time.Now when nil.
	Clock func() time.Time
	// SessionScript is the path of waitroom's session banner script
	// ("/_wr/session.js?event=demo-concert"), included on every page so
	// that an admitted visitor is warned a minute before their session
	// ends; empty includes none. It must be a path on this site.
	SessionScript string
}

// Shop is the demo ticket shop. It is safe for concurrent use: Handler
// serves any number of requests at once.
type Shop struct {
	inv     *client.Client
	event   string
	name    string
	venue   string
	date    time.Time
	holdTTL time.Duration
	// sessionScript is Options.SessionScript.
	sessionScript string
	secret        []byte
	pay           Payments
	log           *slog.Logger
	now           func() time.Time
	pages         pages
	handler       http.Handler

	// def is the stored event definition, read by Setup or on first use.
	def atomic.Pointer[inventory.Event]
	// recent maps a visitor to the ids of their latest holds, newest
	// first. It only offers a way back to the checkout (a lost update
	// when one visitor holds twice at once costs that convenience, no
	// more); the sidecar remains the truth.
	recent *lru.Cache[string, []string]
}

// New checks opts and builds a Shop. Call Setup before serving.
func New(opts Options) (*Shop, error) {
	var problems []string
	if opts.Inventory == nil {
		problems = append(problems, "Inventory: a sidecar client is required")
	}
	if !inventory.ValidEventID(opts.Event) {
		problems = append(problems, fmt.Sprintf("Event: must be 1-%d characters from [A-Za-z0-9_.-], starting with a letter or digit", inventory.MaxEventIDLen))
	}
	if opts.HoldTTL < 0 || opts.HoldTTL > inventory.MaxHoldTTL || opts.HoldTTL%time.Millisecond != 0 {
		problems = append(problems, fmt.Sprintf("HoldTTL: must be a whole number of milliseconds up to %s", inventory.MaxHoldTTL))
	}
	if s := opts.SessionScript; s != "" && (!strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") ||
		strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == '\\' || r == 0x7f })) {
		problems = append(problems, "SessionScript: must be a path on this site, such as /_wr/session.js?event=demo")
	}
	if len(opts.Secret) > 0 && len(opts.Secret) < 16 {
		problems = append(problems, "Secret: must be at least 16 bytes")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrInvalidOptions, strings.Join(problems, "; "))
	}

	s := &Shop{inv: opts.Inventory, event: opts.Event, name: opts.Name, venue: opts.Venue, date: opts.Date,
		holdTTL: opts.HoldTTL, pay: opts.Payments, log: opts.Logger, now: opts.Clock, sessionScript: opts.SessionScript}
	if s.name == "" {
		s.name = DefaultName
	}
	if s.venue == "" {
		s.venue = DefaultVenue
	}
	if s.holdTTL == 0 {
		s.holdTTL = DefaultHoldTTL
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.pay == nil {
		s.pay = FakePayments{Logger: s.log}
	}
	if s.date.IsZero() {
		d := s.now().UTC().AddDate(0, 0, 30)
		s.date = time.Date(d.Year(), d.Month(), d.Day(), 20, 0, 0, 0, time.UTC)
	}
	s.secret = append([]byte(nil), opts.Secret...)
	if len(s.secret) == 0 {
		s.secret = make([]byte, 32)
		rand.Read(s.secret) // never fails (crypto/rand panics instead)
	}
	recent, err := lru.New[string, []string](DefaultRecentHolds)
	if err != nil {
		return nil, fmt.Errorf("demoshop: %w", err)
	}
	s.recent = recent
	if s.pages, err = parsePages(); err != nil {
		return nil, err
	}
	s.handler = s.routes()
	return s, nil
}

// Plan is the seating plan Setup defines: standing tickets on the floor
// (a GA pool of 100), the lower bowl (10 rows A-J of 20 seats) and the
// upper tier (10 rows K-T of 24 seats), each at its own price, and at
// most 6 tickets per visitor.
func Plan() inventory.EventDef {
	rows := func(first byte, n, seats int) []inventory.Row {
		out := make([]inventory.Row, n)
		for i := range out {
			out[i] = inventory.Row{ID: string(rune(first + byte(i))), Seats: seats}
		}
		return out
	}
	return inventory.EventDef{
		Sections: []inventory.Section{
			{ID: "lower", Tier: "lower", PriceCents: 8900, Rows: rows('A', 10, 20)},
			{ID: "upper", Tier: "upper", PriceCents: 4900, Rows: rows('K', 10, 24)},
		},
		GA:             []inventory.Pool{{ID: "floor", Capacity: 100, PriceCents: 6500}},
		Limits:         inventory.Limits{PerUser: 6},
		HoldTTLSeconds: int(DefaultHoldTTL / time.Second),
	}
}

// areaNames are the human names of the Plan's sections and pools; other
// ids are shown as they are.
var areaNames = map[string]string{
	"floor": "Floor (standing)",
	"lower": "Lower bowl",
	"upper": "Upper tier",
}

func areaName(id string) string {
	if n, ok := areaNames[id]; ok {
		return n
	}
	return id
}

// Setup defines the event in the sidecar with Plan, unless it exists
// already: an existing event (from an earlier run over the same data
// directory, say) is kept as it is, with its holds and orders. Setup may
// be called again; it also loads the definition the pages show.
func (s *Shop) Setup(ctx context.Context) error {
	ev, err := s.inv.Event(ctx, s.event)
	switch {
	case err == nil:
		s.log.Info("demoshop: keeping the existing event", "event", s.event, "seats", ev.Seats, "ga", ev.GACapacity)
	case errors.Is(err, inventory.ErrEventNotFound):
		def := Plan()
		if secs := int(s.holdTTL / time.Second); secs > 0 {
			def.HoldTTLSeconds = secs
		}
		if ev, err = s.inv.PutEvent(ctx, s.event, def, actor); err != nil {
			return fmt.Errorf("demoshop: defining event %q: %w", s.event, err)
		}
		s.log.Info("demoshop: defined the event", "event", s.event, "seats", ev.Seats, "ga", ev.GACapacity)
	default:
		return fmt.Errorf("demoshop: reading event %q: %w", s.event, err)
	}
	s.def.Store(&ev)
	return nil
}

// eventDef returns the event's definition, reading it once if Setup did
// not. A definition does not change while the shop runs.
func (s *Shop) eventDef(ctx context.Context) (*inventory.Event, error) {
	if ev := s.def.Load(); ev != nil {
		return ev, nil
	}
	ev, err := s.inv.Event(ctx, s.event)
	if err != nil {
		return nil, err
	}
	s.def.Store(&ev)
	return &ev, nil
}

// remember notes a new hold of visitor for the event page. The stored
// slice is never changed in place.
func (s *Shop) remember(visitor, hold string) {
	old, _ := s.recent.Get(visitor)
	ids := make([]string, 0, recentPerVisitor)
	ids = append(ids, hold)
	for _, id := range old {
		if id != hold && len(ids) < recentPerVisitor {
			ids = append(ids, id)
		}
	}
	s.recent.Add(visitor, ids)
}

// Handler returns the shop's HTTP handler.
func (s *Shop) Handler() http.Handler { return s.handler }

// gatedHandler serves a gated page for a visitor the waiting room let in.
type gatedHandler func(w http.ResponseWriter, r *http.Request, visitor string)

func (s *Shop) routes() http.Handler {
	mux := http.NewServeMux()
	// Pass routes: the proxy lets everyone through.
	mux.HandleFunc("GET /{$}", s.home)
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /static/{file}", s.static)
	mux.HandleFunc("GET /tickets/{order}", s.ticket)
	// Gated routes: only with a pass, so the visitor headers are set.
	mux.HandleFunc("GET /events/{event}", s.gate(s.eventPage))
	mux.HandleFunc("POST /events/{event}/hold", s.gate(s.hold))
	mux.HandleFunc("GET /events/{event}/orders/{order}", s.gate(s.orderPage))
	mux.HandleFunc("POST /events/{event}/orders/{order}/cancel", s.gate(s.cancel))
	mux.HandleFunc("GET /checkout/{hold}", s.gate(s.checkout))
	mux.HandleFunc("POST /checkout/{hold}/pay", s.gate(s.payHold))
	mux.HandleFunc("POST /checkout/{hold}/release", s.gate(s.release))
	mux.HandleFunc("/", s.notFound)
	return s.secure(mux)
}

// secure sets the headers every answer carries and turns a panic into a
// plain error page.
func (s *Shop) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		// Ticket links are capabilities: never leak them in a Referer.
		h.Set("Referrer-Policy", "no-referrer")
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("demoshop: panic serving a page", "path", r.URL.Path, "panic", v)
				s.failed(w, r)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// gate admits requests the waiting room let through: exactly one valid
// visitor id and the shop's event. Anything else is someone reaching the
// shop directly, told to come through the waiting room.
func (s *Shop) gate(h gatedHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		visitor, ok := parseVisitor(r.Header.Values(HeaderVisitor))
		events := r.Header.Values(HeaderEvent)
		if !ok || len(events) != 1 {
			s.message(w, r, http.StatusForbidden, messagePage{
				Heading: "Please come through the waiting room",
				Text: []string{
					"This page is only open to visitors the waiting room has let in, and this request did not come through it.",
					"Open the shop at the address waitroom printed when it started (not the shop's own port), and you will get a fair place in the queue.",
				},
				Links: []link{{Href: "/", Text: "Back to the event", Primary: true}},
			})
			return
		}
		if events[0] != s.event {
			s.message(w, r, http.StatusForbidden, messagePage{
				Heading: "Your pass is for another event",
				Text:    []string{"The waiting room let you in for a different event than this shop sells."},
				Links:   []link{{Href: "/", Text: "Back to the event", Primary: true}},
			})
			return
		}
		if ev := r.PathValue("event"); ev != "" && ev != s.event {
			s.notFound(w, r)
			return
		}
		h(w, r, visitor)
	}
}

// callCtx bounds the sidecar calls of one page.
func callCtx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), callTimeout)
}

// Paths of the shop's pages. Ids are checked before they get here; they
// are escaped all the same.
func (s *Shop) eventURL() string { return "/events/" + url.PathEscape(s.event) }

func (s *Shop) sectionURL(section string) string {
	if section == "" {
		return s.eventURL()
	}
	return s.eventURL() + "?section=" + url.QueryEscape(section) + "#seatmap"
}

func checkoutURL(hold string) string { return "/checkout/" + url.PathEscape(hold) }
func ticketURL(order string) string  { return "/tickets/" + url.PathEscape(order) }

func (s *Shop) orderURL(order string) string {
	return s.eventURL() + "/orders/" + url.PathEscape(order)
}

// redirect answers a POST with 303 See Other to a path of this shop.
func redirect(w http.ResponseWriter, r *http.Request, path string) {
	http.Redirect(w, r, path, http.StatusSeeOther)
}
