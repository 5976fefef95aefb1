package captcha

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/waitroom/waitroom/challenge"
)

// spec is what differs between the providers: everything else about
// verifying a token is the one siteverify client in provider.go.
type spec struct {
	kind      string
	verifyURL string
	// The widget script the page loads by default.
	scriptURL string
	// How the page drives the widget's JavaScript API. Execute is set
	// per provider instance (reCAPTCHA v3 only), not here.
	script challenge.WidgetScript
	// What the page's Content-Security-Policy must allow for the widget
	// loaded from scriptURL, as the provider documents it.
	csp challenge.CSPSources
	// The provider's token lifetime, the default max_age.
	maxAge time.Duration
	// Longest token sent to the provider; a longer one is refused
	// unasked.
	maxToken int
	// The request carries sitekey, so the provider refuses a token minted
	// for another site key (hCaptcha).
	sendSiteKey bool
	// The provider has versions (reCAPTCHA: 2 and 3).
	versioned bool
	// The response carries the widget's action (Turnstile; reCAPTCHA v3).
	action       bool
	maxActionLen int
	actionPunct  string // punctuation allowed in an action besides [A-Za-z0-9]
	actionRule   string
	noActionMsg  string
	// Error codes meaning the token expired or was already verified.
	spentCodes []string
	// Error codes meaning the site's own keys are wrong: every visitor
	// fails until the configuration is fixed.
	misconfigCodes []string
}

// features reports whether responses carry an action and a score, for
// the given version (ignored by unversioned providers).
func (s *spec) features(version int) (action, score bool) {
	if !s.versioned {
		return s.action, false
	}
	return s.action && version == 3, version == 3
}

var specs = map[string]*spec{
	// https://developers.cloudflare.com/turnstile/get-started/server-side-validation/
	Turnstile: {
		kind:      Turnstile,
		verifyURL: DefaultTurnstileVerifyURL,
		scriptURL: DefaultTurnstileScriptURL,
		// https://developers.cloudflare.com/turnstile/get-started/client-side-rendering/
		// (explicit rendering; its ready() throws for an async script)
		script: challenge.WidgetScript{API: "turnstile"},
		// https://developers.cloudflare.com/turnstile/reference/content-security-policy/
		csp: challenge.CSPSources{
			Script: []string{"https://challenges.cloudflare.com"},
			Frame:  []string{"https://challenges.cloudflare.com"},
		},
		maxAge: DefaultTurnstileMaxAge,
		// Cloudflare documents a maximum token length of 2048 characters.
		maxToken:     2048,
		action:       true,
		maxActionLen: 32,
		actionPunct:  "_-",
		actionRule:   "must be 1 to 32 characters from [A-Za-z0-9_-]",
		spentCodes:   []string{"timeout-or-duplicate"},
		misconfigCodes: []string{
			"missing-input-secret", "invalid-input-secret",
		},
	},
	// https://docs.hcaptcha.com/#verify-the-user-response-server-side
	HCaptcha: {
		kind:      HCaptcha,
		verifyURL: DefaultHCaptchaVerifyURL,
		scriptURL: DefaultHCaptchaScriptURL,
		// https://docs.hcaptcha.com/configuration (explicit rendering)
		script: challenge.WidgetScript{API: "hcaptcha"},
		// https://docs.hcaptcha.com/ (Content Security Policy Settings)
		csp: challenge.CSPSources{
			Script:  []string{"https://hcaptcha.com", "https://*.hcaptcha.com"},
			Frame:   []string{"https://hcaptcha.com", "https://*.hcaptcha.com"},
			Style:   []string{"https://hcaptcha.com", "https://*.hcaptcha.com"},
			Connect: []string{"https://hcaptcha.com", "https://*.hcaptcha.com"},
		},
		maxAge:      DefaultHCaptchaMaxAge,
		maxToken:    16 << 10, // undocumented; tokens run past 1 KiB
		sendSiteKey: true,
		noActionMsg: "not for hcaptcha: its responses carry no action",
		spentCodes: []string{
			"invalid-or-already-seen-response", "already-seen-response", "expired-input-response",
		},
		misconfigCodes: []string{
			"missing-input-secret", "invalid-input-secret", "sitekey-secret-mismatch",
			"invalid-sitekey", "not-using-dummy-passcode", "not-using-dummy-secret",
		},
	},
	// https://developers.google.com/recaptcha/docs/verify and
	// https://developers.google.com/recaptcha/docs/v3
	ReCAPTCHA: {
		kind:      ReCAPTCHA,
		verifyURL: DefaultReCAPTCHAVerifyURL,
		scriptURL: DefaultReCAPTCHAScriptURL,
		// https://developers.google.com/recaptcha/docs/display (explicit
		// rendering, after grecaptcha.ready) and
		// https://developers.google.com/recaptcha/docs/v3 (execute)
		script: challenge.WidgetScript{API: "grecaptcha", WaitReady: true},
		// https://developers.google.com/recaptcha/docs/faq (Content
		// Security Policy)
		csp: challenge.CSPSources{
			Script: []string{"https://www.google.com/recaptcha/", "https://www.gstatic.com/recaptcha/"},
			Frame:  []string{"https://www.google.com/recaptcha/", "https://recaptcha.google.com/recaptcha/"},
		},
		maxAge:       DefaultReCAPTCHAMaxAge,
		maxToken:     16 << 10, // undocumented; tokens run to a few KiB
		versioned:    true,
		action:       true,
		maxActionLen: 100,
		actionPunct:  "_/",
		actionRule:   "must be 1 to 100 characters from [A-Za-z0-9_/]",
		noActionMsg:  "not for recaptcha version 2: its responses carry no action",
		spentCodes:   []string{"timeout-or-duplicate"},
		misconfigCodes: []string{
			"missing-input-secret", "invalid-input-secret",
		},
	},
}

// cspFor returns what the page's Content-Security-Policy must allow for
// the widget loaded from script (a valid URL). For the default script
// that is the provider's documented list. For another one, the sources on
// the default script's origin move to script's origin, path kept
// (https://www.google.com/recaptcha/ becomes
// https://www.recaptcha.net/recaptcha/), and script's origin is added to
// the script sources unless one of them covers it already.
func (s *spec) cspFor(script string) challenge.CSPSources {
	from, to := origin(s.scriptURL), origin(script)
	move := func(list []string) []string {
		if len(list) == 0 {
			return nil
		}
		out := make([]string, 0, len(list)+1)
		for _, src := range list {
			if rest, ok := strings.CutPrefix(src, from); ok && (rest == "" || rest[0] == '/') {
				src = to + rest
			}
			if !slices.Contains(out, src) {
				out = append(out, src)
			}
		}
		return out
	}
	c := challenge.CSPSources{Script: move(s.csp.Script), Frame: move(s.csp.Frame),
		Style: move(s.csp.Style), Connect: move(s.csp.Connect)}
	if !slices.ContainsFunc(c.Script, func(src string) bool { return covers(src, script) }) {
		c.Script = append(c.Script, to)
	}
	return c
}

// origin returns scheme://host[:port] of a valid URL, lower case.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// covers reports whether the CSP source expression src (scheme://host
// with an optional leading *. label, port and path) allows loading target,
// by the matching rules of CSP Level 3 for a host-source. It errs on the
// side of false, which only adds a redundant source.
func covers(src, target string) bool {
	s, err := url.Parse(src)
	if err != nil {
		return false
	}
	t, err := url.Parse(target)
	if err != nil || !strings.EqualFold(s.Scheme, t.Scheme) || s.Port() != t.Port() {
		return false
	}
	sh, th := strings.ToLower(s.Hostname()), strings.ToLower(t.Hostname())
	if suffix, wild := strings.CutPrefix(sh, "*"); wild {
		if !strings.HasSuffix(th, suffix) || len(th) <= len(suffix) {
			return false
		}
	} else if sh != th {
		return false
	}
	switch p := s.Path; {
	case p == "" || p == "/":
		return true
	case strings.HasSuffix(p, "/"):
		return strings.HasPrefix(t.Path, p)
	default:
		return t.Path == p
	}
}
