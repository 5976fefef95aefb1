package plugins

import "github.com/waitroom/waitroom/challenge"

// The extension points. Built-in plugins register themselves here from
// their init functions; package plugins/builtin imports them all.
var (
	// Captcha holds CAPTCHA providers: turnstile, hcaptcha, recaptcha.
	Captcha = NewRegistry[challenge.Provider]("captcha")
	// Signals holds risk signals: headers, ja4, ip_ranges, rate,
	// known_bad.
	Signals = NewRegistry[challenge.Signal]("signal")
	// Scorers holds external scorers (http): a site's own bot detection,
	// asked over the network, whose answer counts like a signal's.
	Scorers = NewRegistry[challenge.Signal]("scorer")
	// Sinks holds event sinks: webhook.
	Sinks = NewRegistry[Sink]("sink")
)
