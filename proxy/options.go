package proxy

import (
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/ascii"
	"github.com/waitroom/waitroom/proxy/httpguard"
	"github.com/waitroom/waitroom/proxy/identity"
	"github.com/waitroom/waitroom/proxy/meter"
	"github.com/waitroom/waitroom/proxy/netlimit"
	"github.com/waitroom/waitroom/proxy/ratelimit"
	"github.com/waitroom/waitroom/proxy/target"
	"github.com/waitroom/waitroom/proxy/upstream"
	"github.com/waitroom/waitroom/static"
)

// Options are everything a Proxy runs on. The wiring (internal/app)
// builds them from the configuration file; tests build them directly.
type Options struct {
	// Prefix is the reserved path prefix of waitroom's own endpoints
	// (default "/_wr").
	Prefix string
	// Engine runs the events' queues.
	Engine *admission.Engine
	// Keys signs and verifies tickets and passes.
	Keys *admission.Keyring
	// Pages renders the waiting room.
	Pages *static.Pages
	// Origins, in order; routes name them, the first is the default.
	// Empty in the auth_request deployment, where nginx serves the site.
	Origins []*upstream.Origin
	// Routes, first match wins, on the normalised path (package
	// proxy/target): what is routed is exactly what the origin receives.
	Routes []Route
	// Unmatched is what happens to a path no route matches: a Route
	// without prefix or glob. Its zero value passes to the first origin.
	Unmatched Route
	// PathParameters says what happens to a path parameter (";x" in
	// /events;x/seats, which Tomcat, Jetty and Spring strip before they
	// route): refused with 400 (the zero value) or stripped from the path
	// that is routed and forwarded.
	PathParameters target.Semicolons
	// DefaultHost stands in for the Host header of an HTTP/1.0 request
	// without one; empty refuses such requests with 400.
	DefaultHost string
	// Events are the proxy-side settings of the engine's events.
	Events []Event
	// Trusted are the proxies whose client address header (Trusted.Header)
	// and X-Forwarded-Proto and -Host are believed; its ClientIP is the
	// one client address every decision uses.
	Trusted *httpguard.Trusted
	// Bypass lets staff and monitoring through without a queue.
	Bypass Bypass
	// Crawlers are the search engines' crawlers let through queue routes
	// without queueing (see Crawler).
	Crawlers []Crawler
	// Cookies names and scopes the ticket and pass cookies.
	Cookies Cookies
	// Binding chooses what a ticket and a pass are bound to.
	Binding Binding
	// PassCacheSize is how many verified passes (and as many tickets) are
	// cached (default 100000).
	PassCacheSize int
	// AuditCacheBytes bounds the encoded draw-audit pages kept, in bytes
	// (default DefaultAuditCacheBytes).
	AuditCacheBytes int
	// Defence is the bot defence of the events with a challenge; nil when
	// no event has one.
	Defence *Defence
	// Identity reads who the origin says is logged in, for the events
	// whose Identity is optional or required; nil when none is.
	Identity *identity.Verifier
	// Notify, when set, is told of joins and admissions (for event sinks).
	// It must not block.
	Notify func(Notice)
	// Limiter rate-limits the waiting-room API; nil: no limit.
	Limiter *ratelimit.Limiter
	// SharedLimiter, when set, is the API's budget shared with the other
	// replicas (package redislimit): a request Limiter lets through must
	// pass it too. When it cannot answer within SharedLimitTimeout the
	// request is decided by Limiter alone (counted in
	// waitroom_rate_limit_shared_errors_total): a Redis failover must not
	// refuse every visitor. Needs Limiter.
	SharedLimiter SharedLimiter
	// SharedWrongInvites is the wrong-invite budget shared with the other
	// replicas, in front of which WrongInvites stays; nil: per replica.
	SharedWrongInvites SharedLimiter
	// WrongInvites is the budget of wrong or used invite codes per client
	// address and prefix (see invites.go); its Clock is Clock. Zero
	// buckets: DefaultWrongInvites.
	WrongInvites ratelimit.Config
	// Budget bounds the requests handled at once, by class: the
	// waiting-room API and pages (netlimit.API), requests with a valid pass
	// or a bypass on a gated route (netlimit.Admitted), everything else
	// forwarded (netlimit.Anonymous). A request its class may not take a
	// slot for gets 503 with Retry-After. nil: no limit.
	Budget *netlimit.Budget
	// Meter measures the origins for the admission controller; the proxy
	// records every forwarded request of a gated route in it.
	Meter *meter.Meter
	// Registerer receives the proxy's Prometheus metrics; nil: none.
	Registerer prometheus.Registerer
	// Logger receives warnings; slog.Default when nil.
	Logger *slog.Logger
	// Clock returns the time; time.Now when nil.
	Clock func() time.Time
}

// Event is the proxy's side of an event.
type Event struct {
	// ID is the engine's event id.
	ID string
	// LandingPath is where an admitted visitor goes when the return path
	// they brought is missing or not a same-site path.
	LandingPath string
	// PositionDisplay is how positions are shown: exact, approximate
	// (rounded by the server) or hidden (ETA only).
	PositionDisplay PositionDisplay
	// Challenge is the bot defence at join; nil lets anyone join.
	Challenge *EventChallenge
	// Identity says whether a join reads the visitor's identity
	// (Options.Identity) to give one place per account: off (""),
	// optional or required.
	Identity identity.Mode
	// LoginURL is where a visitor refused for want of an identity is
	// sent to log in (the page links to it; "" shows no link).
	LoginURL string
}

// Notice is something that happened to a visitor, for event sinks.
type Notice struct {
	// Kind is joined or admitted.
	Kind  string
	Event string
	// Visitor is the visitor id in hex.
	Visitor string
	Lane    string
	// Score is the visitor's risk score at join (-1 when not scored).
	Score int
}

// PositionDisplay says how much of a visitor's position they are told.
type PositionDisplay string

// Position displays.
const (
	PositionExact       PositionDisplay = "exact"
	PositionApproximate PositionDisplay = "approximate"
	PositionHidden      PositionDisplay = "hidden"
)

// Bypass rules: a request from one of CIDRs, or carrying Header with
// Secret, passes every gate without a queue. Every bypass is counted.
type Bypass struct {
	CIDRs  []netip.Prefix
	Header string
	Secret string
}

// Cookies configures the ticket and pass cookies. Their names get the
// event id appended ("wr_pass_summer"), so one browser can queue for
// several events, and, when they are always Secure, the prefix browsers
// hold them to (Name): one name per configuration, fixed at start-up.
type Cookies struct {
	Ticket, Pass string
	Domain       string
	Secure       SecureMode
	// Strict makes the cookies SameSite=Strict instead of Lax.
	Strict bool
	// ForwardPass sends the pass cookie on to the origin (it is removed
	// otherwise, as the ticket cookie always is).
	ForwardPass bool
}

// Name returns the cookie name of base (Ticket or Pass) for event: base,
// "_" and the event id, with the prefix that makes browsers hold the
// cookie to its attributes when it is always Secure: "__Host-" (no
// Domain, Path=/: only this host may set or read it, and only over
// HTTPS) or, with a Domain, "__Secure-". A base that already starts with
// a prefix keeps it. With SecureAuto or SecureNever it adds no prefix: a
// prefixed cookie without Secure is refused by browsers.
func (c *Cookies) Name(base, event string) string {
	name := base + "_" + event
	if c.Secure != SecureAlways || ascii.HasPrefixFold(base, "__Host-") || ascii.HasPrefixFold(base, "__Secure-") {
		return name
	}
	if c.Domain == "" {
		return "__Host-" + name
	}
	return "__Secure-" + name
}

// SecureMode says when cookies get the Secure attribute.
type SecureMode int

// Secure modes.
const (
	// SecureAuto marks cookies Secure when the request came over HTTPS
	// (directly or, from a trusted proxy, by X-Forwarded-Proto).
	SecureAuto SecureMode = iota
	// SecureAlways marks every cookie Secure, and prefixes their names
	// (Cookies.Name).
	SecureAlways
	SecureNever
)

// Binding chooses the device-binding signals hashed into tickets and
// passes: a token presented with other signals is refused.
type Binding struct {
	UserAgent bool
	// IPPrefix binds to the client's /24 (IPv4) or /48 (IPv6). The
	// configuration turns it on by default (serve.binding); a visitor
	// whose network changes then needs a new ticket.
	IPPrefix bool
	// TLSStack binds to the client's TLS stack (challenge.TLSStack of
	// its JA4, from Defence.Fingerprints or the trusted JA4 header), so
	// that a pass a browser earned fails in a script with the same
	// User-Agent. It needs the bot defence, which knows the JA4.
	TLSStack bool
}

// Defaults of Options.
const (
	DefaultPrefix        = "/_wr"
	DefaultPassCacheSize = 100_000
	DefaultTicketCookie  = "wr_ticket"
	DefaultPassCookie    = "wr_pass"
	// DefaultBypassHeader carries the bypass secret.
	DefaultBypassHeader = "X-Waitroom-Bypass"
)
