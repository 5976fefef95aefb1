package challenge

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/waitroom/waitroom/internal/ascii"
)

// Request is what risk scoring sees of one request to the waiting-room
// API. The proxy fills it from the fasthttp request with copies, so a
// Request stays valid after the handler returns. Not safe for concurrent
// mutation; signals only read it.
type Request struct {
	// Event the visitor asks to join.
	Event string
	// Client address (after trusted-proxy resolution).
	IP netip.Addr
	// Request headers in the order they arrived on the wire, names as the
	// client wrote them.
	Headers []Header
	// JA4 TLS fingerprint of the client's ClientHello: computed when
	// waitroom terminates TLS, or taken from a trusted front proxy's
	// header; "" when unknown.
	JA4 string
	// Visitor id of a ticket the request carries, "" if none.
	Visitor string
	// Join is true when the request is a join (POST .../api/join, scored
	// again with the solution it carries), false for a challenge fetch.
	Join bool
	// Client is what the waiting-room page reported of the browser it
	// runs in, sent with a join; nil when the request carries none (a
	// challenge fetch, a script, an older page).
	Client *ClientReport
	// When the request arrived.
	Now time.Time
}

// ClientReport is what the waiting-room page (static/web/room.js) found
// in the browser it runs in, sent with the join. Every field is the
// client's word and optional: a script can send anything or nothing, so
// it can raise suspicion but never vouch for anyone.
type ClientReport struct {
	// Webdriver is navigator.webdriver; nil when not reported.
	Webdriver *bool
	// Automation names the automation artefacts the page found: globals
	// that drivers leave (window.cdc_…, __playwright…, callPhantom,
	// _selenium, __nightmare, domAutomation…). At most MaxClientNames,
	// each at most MaxClientNameLength bytes.
	Automation []string
	// Missing names APIs every browser the page supports has that this
	// one lacks (ClientAPIs lists the names judged; others are ignored).
	// Same bounds.
	Missing []string
	// SolveMillis is how long the proof of work took, in milliseconds,
	// and Hashes how many hashes the solver says it computed; 0 when not
	// reported.
	SolveMillis, Hashes uint64
}

// Bounds of a ClientReport's lists.
const (
	MaxClientNames      = 16
	MaxClientNameLength = 64
)

// Header is one request header as sent.
type Header struct {
	Name, Value string
}

// Get returns the value of the first header named name (case-insensitive)
// and whether there is one.
func (r *Request) Get(name string) (string, bool) {
	for _, h := range r.Headers {
		if ascii.EqualFold(h.Name, name) {
			return h.Value, true
		}
	}
	return "", false
}

// Signal judges one aspect of a request. Implementations are safe for
// concurrent use.
type Signal interface {
	// Check returns how suspicious r looks by this signal's measure. A
	// signal that cannot judge (an external scorer timing out) returns a
	// zero Finding and an error; scoring logs it and goes on.
	Check(ctx context.Context, r *Request) (Finding, error)
}

// Finding is one signal's judgement.
type Finding struct {
	// Suspicion from 0 (looks human) to 1 (certainly automated). The
	// signal's configured weight scales it into score points.
	Suspicion float64
	// Why, short and stable enough to count in metrics
	// ("ua_chrome_without_client_hints"); "" when Suspicion is 0.
	Reason string
}

// Provider verifies CAPTCHA tokens with one provider's siteverify API.
// Implementations are safe for concurrent use.
type Provider interface {
	// Verify checks token, the response the provider's widget gave the
	// visitor's browser, and that it is used only once. It returns nil
	// when the provider vouches for a person; an error wrapping
	// ErrCaptchaFailed when it does not; an error wrapping
	// ErrCaptchaUnavailable when the provider could not be asked in time
	// and the provider is configured fail-closed (fail-open returns nil).
	Verify(ctx context.Context, token string, remoteIP netip.Addr) error
	// Widget is what the waiting-room page needs to show the widget.
	Widget() Widget
}

// Widget describes a CAPTCHA widget for the page.
type Widget struct {
	// Provider kind: turnstile, hcaptcha or recaptcha.
	Kind string `json:"kind"`
	// The site's public key for the widget.
	SiteKey string `json:"site_key"`
	// URL of the provider's widget script.
	ScriptURL string `json:"script_url"`
	// Action name the widget is rendered with ("" for none).
	Action string `json:"action,omitempty"`
	// CSP are the sources the page's Content-Security-Policy must allow
	// for the widget to load and run. Not sent to the page: the server
	// puts them in the page's policy.
	CSP CSPSources `json:"-"`
}

// CSPSources are Content-Security-Policy source expressions by
// directive, such as "https://challenges.cloudflare.com" or
// "https://www.google.com/recaptcha/": what a third-party widget needs on
// top of a page's own policy. The zero value needs nothing.
type CSPSources struct {
	// Script are script-src sources: the widget's script and what it loads.
	Script []string
	// Frame are frame-src sources: the widget's iframes.
	Frame []string
	// Style are style-src sources: stylesheets the widget loads.
	Style []string
	// Connect are connect-src sources: the widget's fetches.
	Connect []string
}

// Errors of CAPTCHA verification, for errors.Is.
var (
	ErrCaptchaFailed      = errors.New("challenge: captcha not solved")
	ErrCaptchaUnavailable = errors.New("challenge: captcha provider unavailable")
)

// ReplayGuard remembers which one-time values (challenge ids, CAPTCHA
// token hashes) were redeemed. Implementations are safe for concurrent use
// and atomic: of any number of concurrent Redeem calls for one id, across
// every replica sharing the store, exactly one returns true.
type ReplayGuard interface {
	// Redeem marks id used until expires and reports whether it was
	// unused before. The check and the mark are one atomic step.
	Redeem(ctx context.Context, id []byte, expires time.Time) (bool, error)
	// Close releases the guard's resources.
	Close() error
}
