package captcha

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/waitroom/waitroom/plugins"
	"github.com/waitroom/waitroom/plugins/internal/httpc"
)

// Provider kinds, the names the factories are registered under.
const (
	Turnstile = "turnstile"
	HCaptcha  = "hcaptcha"
	ReCAPTCHA = "recaptcha"
)

// Config is the config section of every CAPTCHA provider. A few fields
// apply to some providers only; setting one for another provider is a
// validation error. A zero duration or number means the default. A Config
// is plain data, safe to read from several goroutines.
type Config struct {
	// The widget's site key (public; the page renders the widget with
	// it). Required.
	SiteKey string `yaml:"site_key"`
	// The widget's secret key, sent to the provider's siteverify API.
	// Required; take it from the environment (${TURNSTILE_SECRET}), never
	// write it inline.
	Secret string `yaml:"secret"`
	// Hostnames of the pages where the widget runs; a token the provider
	// says was solved on any other site is refused. Required, at least
	// one. "*.example.com" allows every subdomain of example.com (not
	// example.com itself). Compared without regard to case.
	Hostnames []string `yaml:"hostnames"`
	// Action the widget is rendered with; a token whose action differs is
	// refused. Optional for turnstile (1 to 32 characters from
	// [A-Za-z0-9_-]); required for recaptcha version 3 (1 to 100
	// characters from [A-Za-z0-9_/]); not for hcaptcha or recaptcha
	// version 2, whose responses carry no action.
	Action string `yaml:"action"`
	// reCAPTCHA version, 2 (the checkbox or invisible challenge) or 3 (a
	// score, no challenge). recaptcha only; default 3.
	Version int `yaml:"version"`
	// Lowest reCAPTCHA v3 score (0.0 likely a bot, 1.0 likely a person)
	// accepted, above 0 and at most 1. recaptcha version 3 only; default
	// 0.5, Google's suggested starting threshold.
	MinScore float64 `yaml:"min_score"`
	// Oldest token accepted, from the moment the provider says the
	// challenge was solved, 1s to 10m. Defaults: the provider's own token
	// lifetime, 5m for turnstile, 2m for hcaptcha and recaptcha.
	MaxAge time.Duration `yaml:"max_age"`
	// How long one siteverify call may take, 50ms to 30s; default 3s.
	// Past it the provider counts as unavailable.
	Timeout time.Duration `yaml:"timeout"`
	// When the provider cannot be asked (unreachable, timed out, a 5xx or
	// an unreadable answer), let the visitor through (true) rather than
	// refuse them (false, the default). A token the provider explicitly
	// rejects is refused either way.
	FailOpen bool `yaml:"fail_open"`
	// The siteverify endpoint; default the provider's real one. https,
	// or plain http to a loopback address (the secret is in the request).
	VerifyURL string `yaml:"verify_url"`
	// The widget script the waiting-room page loads; default the
	// provider's real one (DefaultTurnstileScriptURL, …). https, or plain
	// http to a loopback address (a local test). For reCAPTCHA where
	// www.google.com is blocked, Google documents
	// https://www.recaptcha.net/recaptcha/api.js. The page's
	// Content-Security-Policy follows: the provider's sources on the
	// default script's origin move to this URL's origin, and the origin is
	// allowed as a script source. Without render or onload parameters:
	// the page renders the widget itself. Turnstile's api.js runs only
	// from Cloudflare's own hosts.
	ScriptURL string `yaml:"script_url"`
}

// Defaults of Config.
const (
	DefaultTimeout = 3 * time.Second
	// Cloudflare: a Turnstile token is valid for 300 seconds.
	DefaultTurnstileMaxAge = 5 * time.Minute
	// hCaptcha tokens expire after 120 seconds, like reCAPTCHA's.
	DefaultHCaptchaMaxAge = 2 * time.Minute
	// Google: a reCAPTCHA response token is valid for two minutes.
	DefaultReCAPTCHAMaxAge = 2 * time.Minute
	// Google's reCAPTCHA v3 docs suggest starting from a 0.5 threshold.
	DefaultMinScore         = 0.5
	DefaultReCAPTCHAVersion = 3

	DefaultTurnstileVerifyURL = "https://challenges.cloudflare.com/turnstile/v0/siteverify"
	DefaultHCaptchaVerifyURL  = "https://api.hcaptcha.com/siteverify"
	DefaultReCAPTCHAVerifyURL = "https://www.google.com/recaptcha/api/siteverify"

	DefaultTurnstileScriptURL = "https://challenges.cloudflare.com/turnstile/v0/api.js"
	DefaultHCaptchaScriptURL  = "https://js.hcaptcha.com/1/api.js"
	DefaultReCAPTCHAScriptURL = "https://www.google.com/recaptcha/api.js"
)

// Limits Validate enforces.
const (
	MinTimeout    = 50 * time.Millisecond
	MaxTimeout    = 30 * time.Second
	MinMaxAge     = time.Second
	MaxMaxAge     = 10 * time.Minute
	MaxSiteKeyLen = 256
	MaxHostnames  = 64
)

// Validate checks c as the config of a provider of kind (turnstile,
// hcaptcha or recaptcha). It returns nil or every problem, each a
// *plugins.FieldError, joined. It does not change c.
func (c *Config) Validate(kind string) error {
	s := specs[kind]
	if s == nil {
		return plugins.Fail("", "captcha: unknown provider kind %q", kind)
	}
	var errs []error
	fail := func(path, format string, args ...any) {
		errs = append(errs, plugins.Fail(path, format, args...))
	}

	switch {
	case c.SiteKey == "":
		fail("site_key", "required")
	case len(c.SiteKey) > MaxSiteKeyLen:
		fail("site_key", "longer than %d characters", MaxSiteKeyLen)
	case !printable(c.SiteKey):
		fail("site_key", "must be printable ASCII without spaces")
	}
	switch {
	case c.Secret == "":
		fail("secret", "required (take it from the environment: ${...})")
	case strings.TrimSpace(c.Secret) != c.Secret:
		fail("secret", "has leading or trailing white space")
	case strings.Contains(c.Secret, "${"):
		fail("secret", "contains an unexpanded ${...} reference")
	}

	if len(c.Hostnames) == 0 {
		fail("hostnames", "required: the hostnames of the pages showing the widget (a token solved elsewhere is refused)")
	}
	if len(c.Hostnames) > MaxHostnames {
		fail("hostnames", "more than %d entries", MaxHostnames)
	}
	seen := map[string]bool{}
	for i, h := range c.Hostnames {
		path := fmt.Sprintf("hostnames[%d]", i)
		if msg := checkHostname(h); msg != "" {
			fail(path, "%s", msg)
			continue
		}
		if seen[strings.ToLower(h)] {
			fail(path, "%q listed twice", h)
		}
		seen[strings.ToLower(h)] = true
	}

	version := c.Version
	if s.versioned {
		if version == 0 {
			version = DefaultReCAPTCHAVersion
		}
		if version != 2 && version != 3 {
			fail("version", "must be 2 or 3")
		}
	} else if c.Version != 0 {
		fail("version", "only for recaptcha")
	}
	hasAction, hasScore := s.features(version)

	switch {
	case c.Action != "" && !hasAction:
		fail("action", "%s", s.noActionMsg)
	case c.Action == "" && hasScore:
		fail("action", "required for recaptcha version 3: the action the page executes reCAPTCHA with")
	case c.Action != "" && !validAction(s, c.Action):
		fail("action", "%s", s.actionRule)
	}
	switch {
	case c.MinScore != 0 && !hasScore:
		fail("min_score", "only for recaptcha version 3")
	case c.MinScore < 0 || c.MinScore > 1:
		fail("min_score", "must be above 0 and at most 1")
	}

	if c.MaxAge != 0 && (c.MaxAge < MinMaxAge || c.MaxAge > MaxMaxAge) {
		fail("max_age", "must be %s to %s", MinMaxAge, MaxMaxAge)
	}
	if c.Timeout != 0 && (c.Timeout < MinTimeout || c.Timeout > MaxTimeout) {
		fail("timeout", "must be %s to %s", MinTimeout, MaxTimeout)
	}
	if c.VerifyURL != "" {
		if msg := httpc.CheckURL(c.VerifyURL, true); msg != "" {
			fail("verify_url", "%s", msg)
		}
	}
	if c.ScriptURL != "" {
		if msg := checkScriptURL(c.ScriptURL); msg != "" {
			fail("script_url", "%s", msg)
		}
	}
	return errors.Join(errs...)
}

// checkScriptURL says what is wrong with raw as a widget script's URL, or
// "". Its origin goes into the page's Content-Security-Policy, so the
// host must be a plain hostname or IP address.
func checkScriptURL(raw string) string {
	if msg := httpc.CheckURL(raw, true); msg != "" {
		return msg
	}
	u, _ := url.Parse(raw) // CheckURL parsed it
	host := u.Hostname()
	if net.ParseIP(host) == nil && (checkHostname(host) != "" || strings.ContainsAny(host, "*_") ||
		strings.HasPrefix(host, "-") || strings.HasSuffix(host, "-") || strings.Contains(host, ".-") || strings.Contains(host, "-.")) {
		return fmt.Sprintf("%q is not a valid hostname", host)
	}
	if p := u.Port(); p != "" || strings.HasSuffix(u.Host, ":") {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 || p[0] == '0' {
			return "has an invalid port"
		}
	}
	q := u.Query()
	if q.Has("render") || q.Has("onload") {
		return "must not set render or onload: the page renders the widget itself"
	}
	return ""
}

// resolved returns c with every default applied; c must be valid.
func (c Config) resolved(s *spec) Config {
	if s.versioned && c.Version == 0 {
		c.Version = DefaultReCAPTCHAVersion
	}
	if _, hasScore := s.features(c.Version); hasScore && c.MinScore == 0 {
		c.MinScore = DefaultMinScore
	}
	if c.MaxAge == 0 {
		c.MaxAge = s.maxAge
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.VerifyURL == "" {
		c.VerifyURL = s.verifyURL
	}
	if c.ScriptURL == "" {
		c.ScriptURL = s.scriptURL
	}
	hosts := make([]string, len(c.Hostnames))
	for i, h := range c.Hostnames {
		hosts[i] = strings.ToLower(h)
	}
	c.Hostnames = hosts
	return c
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// checkHostname says what is wrong with h as an allowed hostname, or "".
func checkHostname(h string) string {
	name := strings.TrimPrefix(h, "*.")
	switch {
	case h == "":
		return "empty"
	case strings.Contains(h, "://") || strings.ContainsAny(h, "/:?#@"):
		return fmt.Sprintf("%q must be a bare hostname, without scheme, port or path", h)
	case len(name) > 253:
		return "longer than 253 characters"
	case strings.Contains(name, "*"):
		return fmt.Sprintf("%q: a wildcard is only allowed as a leading *.", h)
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Sprintf("%q is not a valid hostname", h)
		}
		for i := 0; i < len(label); i++ {
			b := label[i] | 0x20
			if !(b >= 'a' && b <= 'z' || label[i] >= '0' && label[i] <= '9' || label[i] == '-' || label[i] == '_') {
				return fmt.Sprintf("%q is not a valid hostname", h)
			}
		}
	}
	return ""
}

func validAction(s *spec, a string) bool {
	if len(a) > s.maxActionLen {
		return false
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(s.actionPunct, c) >= 0) {
			return false
		}
	}
	return true
}
