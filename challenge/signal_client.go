package challenge

import (
	"context"
	"slices"
)

// Reasons of ClientSignal, stable for metrics.
const (
	// navigator.webdriver is true: the browser is driven by automation.
	ReasonClientWebdriver = "client_webdriver"
	// A driver's globals are in the page.
	ReasonClientAutomation = "client_automation"
	// APIs every supported browser has are missing.
	ReasonClientMissingAPIs = "client_missing_apis"
	// The work was solved faster than a browser can.
	ReasonClientSolveTooFast = "client_solve_too_fast"
)

// ClientAPIs are the API names the page may report missing that
// ClientSignal judges: every browser the page supports has them, and
// privacy settings and extensions do not remove them (unlike WebGL,
// plugins or WebAssembly, which Tor Browser, Safari's Lockdown Mode or
// hardened profiles turn off). What lacks them runs the page in something
// else: a DOM emulation (jsdom, happy-dom) or an old headless shell.
var ClientAPIs = []string{
	"Worker", "fetch", "Promise", "crypto.getRandomValues", "requestAnimationFrame",
	"IntersectionObserver", "Intl.DateTimeFormat", "navigator.languages",
}

// MaxBrowserHashesPerMilli is the fastest SHA-256 rate a browser's solver
// is believed to reach: a million hashes a millisecond (1 GH/s), several
// times a many-core desktop's WebAssembly; beyond it lies a GPU or a lie.
const MaxBrowserHashesPerMilli = 1_000_000

// Suspicion of each ClientSignal finding. A driver that admits itself is
// certain; a missing API is strong but a page change could cause it; a
// reported solve rate is the client's own number.
const (
	suspClientWebdriver  = 1.0
	suspClientAutomation = 1.0
	suspClientMissingAPI = 0.5 // each, combined
	suspClientTooFast    = 0.5
)

// ClientSignal judges the page's report of the browser it runs in
// (Request.Client): navigator.webdriver true, automation artefacts,
// missing APIs (each of ClientAPIs reported missing adds to the
// suspicion as independent evidence, 1 − 0.5ⁿ) and a solve faster than
// MaxBrowserHashesPerMilli. A request without a report, and any field
// left out, count nothing: the report is never required, so a privacy
// browser or a page that could not collect it is not punished, and a
// bot that leaves it out gains nothing it would not have had. Weigh it
// modestly: a bot can send a clean report.
//
// It is stateless and safe for concurrent use; Check allocates nothing.
type ClientSignal struct{}

// Check implements Signal.
func (ClientSignal) Check(_ context.Context, r *Request) (Finding, error) {
	c := r.Client
	if c == nil {
		return Finding{}, nil
	}
	var fs headerFindings
	if c.Webdriver != nil && *c.Webdriver {
		fs.add(ReasonClientWebdriver, suspClientWebdriver)
	}
	if len(c.Automation) > 0 {
		fs.add(ReasonClientAutomation, suspClientAutomation)
	}
	n := 0
	for i, m := range c.Missing {
		if slices.Contains(ClientAPIs, m) && !slices.Contains(c.Missing[:i], m) {
			n++
		}
	}
	if n > 0 {
		clean := 1.0
		for range n {
			clean *= 1 - suspClientMissingAPI
		}
		fs.add(ReasonClientMissingAPIs, 1-clean)
	}
	if c.Hashes > 0 && c.SolveMillis > 0 && c.Hashes/c.SolveMillis > MaxBrowserHashesPerMilli {
		fs.add(ReasonClientSolveTooFast, suspClientTooFast)
	}
	return fs.combine(), nil
}

var _ Signal = ClientSignal{}
