package captcha

import "time"

// spec is what differs between the providers: everything else about
// verifying a token is the one siteverify client in provider.go.
type spec struct {
	kind      string
	verifyURL string
	// The widget script the page loads.
	scriptURL string
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
		scriptURL: "https://challenges.cloudflare.com/turnstile/v0/api.js",
		maxAge:    DefaultTurnstileMaxAge,
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
		kind:        HCaptcha,
		verifyURL:   DefaultHCaptchaVerifyURL,
		scriptURL:   "https://js.hcaptcha.com/1/api.js",
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
		kind:         ReCAPTCHA,
		verifyURL:    DefaultReCAPTCHAVerifyURL,
		scriptURL:    "https://www.google.com/recaptcha/api.js",
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
