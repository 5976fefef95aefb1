package captcha

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
	"github.com/waitroom/waitroom/plugins/internal/httpc"
)

// Errors Verify wraps besides challenge.ErrCaptchaFailed, for errors.Is.
var (
	// ErrTokenSpent: the token expired or was already verified (by the
	// provider's word, or found in the replay guard).
	ErrTokenSpent = errors.New("captcha: token expired or already used")
	// ErrMisconfigured: the provider rejected the site's secret or site
	// key, so every visitor fails until the configuration is fixed.
	ErrMisconfigured = errors.New("captcha: provider rejected the site's keys")
)

const (
	// MaxResponseBytes bounds the siteverify answer read; real ones are a
	// few hundred bytes.
	MaxResponseBytes = 64 << 10
	// clockSkew is added to the replay guard's memory of a token beyond
	// max_age, so that a provider clock ahead of ours cannot make a token
	// pass the age check after the guard has forgotten it.
	clockSkew = time.Minute
	// idleConns kept to the provider: a flash sale verifies in bursts.
	idleConns = 64
)

// Provider verifies tokens of one CAPTCHA provider. Safe for concurrent
// use.
type Provider struct {
	spec   *spec
	cfg    Config // resolved: every default applied
	client *http.Client
	replay challenge.ReplayGuard
	log    *slog.Logger
	widget challenge.Widget
	script challenge.WidgetScript
	now    func() time.Time
}

// New returns a provider of kind (turnstile, hcaptcha or recaptcha)
// configured by cfg. env.Replay, when not nil, makes tokens single use
// across replicas on top of the provider's own check; env.Log gets
// warnings (nil: discarded).
func New(kind string, cfg Config, env plugins.Env) (*Provider, error) {
	if err := cfg.Validate(kind); err != nil {
		return nil, err
	}
	s := specs[kind]
	cfg = cfg.resolved(s)
	log := env.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Provider{
		spec:   s,
		cfg:    cfg,
		client: httpc.NewClient(idleConns),
		replay: env.Replay,
		log:    log.With("captcha", kind),
		now:    time.Now,
	}
	p.widget = challenge.Widget{Kind: kind, SiteKey: cfg.SiteKey, ScriptURL: cfg.ScriptURL, CSP: s.cspFor(cfg.ScriptURL)}
	p.script = s.script
	if action, score := s.features(cfg.Version); action {
		p.widget.Action = cfg.Action
		if score {
			// A score widget is invisible: the page executes it for
			// the action instead of rendering it.
			p.script.Execute = true
			// reCAPTCHA v3 loads its script with the site key to render.
			sep := "?"
			if strings.Contains(cfg.ScriptURL, "?") {
				sep = "&"
			}
			p.widget.ScriptURL += sep + "render=" + url.QueryEscape(cfg.SiteKey)
		}
	}
	return p, nil
}

// Widget returns what the page needs to render the widget, and what the
// page's Content-Security-Policy must allow for it. For recaptcha a
// non-empty Action (and a ScriptURL with render=) means version 3. The
// slices in CSP are shared: do not modify them.
func (p *Provider) Widget() challenge.Widget { return p.widget }

// WidgetScript says how the page drives the widget's JavaScript API:
// the provider's global object, whether to wait for its ready(), and
// whether it is executed for the action (reCAPTCHA v3) rather than
// rendered.
func (p *Provider) WidgetScript() challenge.WidgetScript { return p.script }

// Verify checks token with the provider's siteverify API. See
// challenge.Provider for what the errors mean; an error also wraps
// ErrTokenSpent or ErrMisconfigured when one of those is the reason.
// Error messages are for logs, not for visitors.
func (p *Provider) Verify(ctx context.Context, token string, remoteIP netip.Addr) error {
	switch {
	case token == "":
		return p.failed("no token")
	case len(token) > p.spec.maxToken:
		return p.failed(fmt.Sprintf("token longer than %d bytes", p.spec.maxToken))
	}
	if p.replay != nil {
		id := sha256.Sum256([]byte(token))
		fresh, err := p.replay.Redeem(ctx, id[:], p.now().Add(p.cfg.MaxAge+clockSkew))
		switch {
		case err != nil:
			// The provider still refuses a second verification itself.
			p.log.Warn("captcha: replay guard unavailable; relying on the provider's single-use check", "err", err)
		case !fresh:
			return p.failed("token already used (replay guard)", ErrTokenSpent)
		}
	}

	body, status, err := p.post(ctx, token, remoteIP)
	if err != nil {
		return p.unavailable(ctx, err)
	}
	if status >= 500 || status == http.StatusTooManyRequests {
		return p.unavailable(ctx, fmt.Errorf("siteverify answered HTTP %d", status))
	}
	r, err := parseResponse(body)
	if err != nil {
		return p.unavailable(ctx, fmt.Errorf("siteverify answered HTTP %d: %w", status, err))
	}
	if r.Success && status != http.StatusOK {
		return p.unavailable(ctx, fmt.Errorf("siteverify answered success with HTTP %d", status))
	}
	return p.judge(r, p.now())
}

// post sends the siteverify request and returns the answer's body and
// status.
func (p *Provider) post(ctx context.Context, token string, remoteIP netip.Addr) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	form := url.Values{"secret": {p.cfg.Secret}, "response": {token}}
	if remoteIP.IsValid() {
		form.Set("remoteip", remoteIP.Unmap().String())
	}
	if p.spec.sendSiteKey {
		form.Set("sitekey", p.cfg.SiteKey)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.VerifyURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "waitroom")
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := httpc.ReadAll(resp.Body, MaxResponseBytes)
	if err != nil {
		return nil, resp.StatusCode, fmt.Errorf("reading the siteverify answer: %w", err)
	}
	return body, resp.StatusCode, nil
}

// judge decides on a parsed siteverify answer, as of now.
func (p *Provider) judge(r *response, now time.Time) error {
	if !r.Success {
		codes := strings.Join(r.ErrorCodes, ",")
		if codes == "" {
			codes = "none given"
		}
		msg := "provider refused the token (error-codes: " + codes + ")"
		switch {
		case anyOf(r.ErrorCodes, p.spec.spentCodes):
			return p.failed(msg, ErrTokenSpent)
		case anyOf(r.ErrorCodes, p.spec.misconfigCodes):
			return p.failed(msg, ErrMisconfigured)
		}
		return p.failed(msg)
	}
	if !p.hostAllowed(r.Hostname) {
		return p.failed(fmt.Sprintf("token solved on hostname %q, not an allowed one", r.Hostname))
	}
	action, score := p.spec.features(p.cfg.Version)
	if action && p.cfg.Action != "" && r.Action != p.cfg.Action {
		return p.failed(fmt.Sprintf("token for action %q, want %q", r.Action, p.cfg.Action))
	}
	ts, ok := parseTime(r.ChallengeTS)
	if !ok {
		return p.failed(fmt.Sprintf("answer has no valid challenge_ts (%q)", r.ChallengeTS))
	}
	if age := now.Sub(ts); age > p.cfg.MaxAge {
		return p.failed(fmt.Sprintf("token is %s old, max_age %s", age.Round(time.Second), p.cfg.MaxAge), ErrTokenSpent)
	}
	if score {
		if r.Score == nil {
			return p.failed("answer has no score")
		}
		if *r.Score < p.cfg.MinScore {
			return p.failed(fmt.Sprintf("score %.2f below min_score %.2f", *r.Score, p.cfg.MinScore))
		}
	}
	return nil
}

// hostAllowed reports whether host matches one of the configured
// hostnames.
func (p *Provider) hostAllowed(host string) bool {
	if host == "" {
		return false
	}
	host = strings.ToLower(host)
	for _, h := range p.cfg.Hostnames {
		if suffix, wild := strings.CutPrefix(h, "*"); wild {
			if len(host) > len(suffix) && strings.HasSuffix(host, suffix) {
				return true
			}
		} else if host == h {
			return true
		}
	}
	return false
}

// unavailable is Verify's answer when the provider could not be asked:
// nil when failing open, else an error wrapping ErrCaptchaUnavailable.
// When the caller's own context ended, nobody is waiting for a verdict
// and it is never nil.
func (p *Provider) unavailable(ctx context.Context, cause error) error {
	if ctx.Err() != nil {
		return &verifyError{kind: p.spec.kind, msg: "verification abandoned: " + ctx.Err().Error(), errs: []error{challenge.ErrCaptchaUnavailable, ctx.Err()}}
	}
	if p.cfg.FailOpen {
		p.log.Warn("captcha: provider unavailable; failing open", "err", cause)
		return nil
	}
	return &verifyError{kind: p.spec.kind, msg: "provider unavailable: " + cause.Error(), errs: []error{challenge.ErrCaptchaUnavailable, cause}}
}

func (p *Provider) failed(msg string, also ...error) error {
	return &verifyError{kind: p.spec.kind, msg: msg, errs: append([]error{challenge.ErrCaptchaFailed}, also...)}
}

// verifyError is an error of Verify: one message for the log, wrapping a
// sentinel or two.
type verifyError struct {
	kind, msg string
	errs      []error
}

func (e *verifyError) Error() string   { return "captcha: " + e.kind + ": " + e.msg }
func (e *verifyError) Unwrap() []error { return e.errs }

func anyOf(codes, want []string) bool {
	for _, c := range codes {
		if slices.Contains(want, c) {
			return true
		}
	}
	return false
}

var _ challenge.ScriptedProvider = (*Provider)(nil)
