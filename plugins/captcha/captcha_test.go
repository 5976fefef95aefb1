package captcha

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/challenge/memstore"
	"github.com/waitroom/waitroom/plugins"
)

// memReplay is a map-based challenge.ReplayGuard for the tests.
type memReplay struct {
	mu   sync.Mutex
	used map[string]time.Time
	fail error
}

func newMemReplay() *memReplay { return &memReplay{used: map[string]time.Time{}} }

func (m *memReplay) Redeem(_ context.Context, id []byte, expires time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return false, m.fail
	}
	if exp, ok := m.used[string(id)]; ok && time.Now().Before(exp) {
		return false, nil
	}
	m.used[string(id)] = expires
	return true, nil
}

func (m *memReplay) Close() error { return nil }

var _ challenge.ReplayGuard = (*memReplay)(nil)

// build makes a provider through the registry, as waitroom does, from a
// YAML section pointed at the fake.
func build(t *testing.T, kind, section string, env plugins.Env) challenge.Provider {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(section), &doc); err != nil {
		t.Fatal(err)
	}
	p, err := plugins.Captcha.Build(context.Background(), kind, doc.Content[0], env)
	if err != nil {
		t.Fatalf("Build(%s): %v", kind, err)
	}
	return p
}

type variant struct {
	name, kind string
	extra      string // YAML lines added to the section
	action     string // what the fake's answers carry
	hasAction  bool
	hasScore   bool
}

var variants = []variant{
	{name: "turnstile", kind: Turnstile, extra: "action: join\n", action: "join", hasAction: true},
	{name: "hcaptcha", kind: HCaptcha},
	{name: "recaptcha_v3", kind: ReCAPTCHA, extra: "action: join\nmin_score: 0.5\n", action: "join", hasAction: true, hasScore: true},
	{name: "recaptcha_v2", kind: ReCAPTCHA, extra: "version: 2\n"},
}

func section(f *fakeSiteverify, v variant, more string) string {
	return fmt.Sprintf("site_key: site-key\nsecret: %s\nhostnames: [tickets.example.com, \"*.shop.example.com\"]\nverify_url: %s\ntimeout: 200ms\n%s%s",
		f.secret, f.srv.URL, v.extra, more)
}

type outcome int

const (
	pass outcome = iota
	failed
	unavailable
)

func check(t *testing.T, err error, want outcome) {
	t.Helper()
	switch want {
	case pass:
		if err != nil {
			t.Fatalf("Verify = %v, want nil", err)
		}
	case failed:
		if !errors.Is(err, challenge.ErrCaptchaFailed) || errors.Is(err, challenge.ErrCaptchaUnavailable) {
			t.Fatalf("Verify = %v, want ErrCaptchaFailed", err)
		}
	case unavailable:
		if !errors.Is(err, challenge.ErrCaptchaUnavailable) || errors.Is(err, challenge.ErrCaptchaFailed) {
			t.Fatalf("Verify = %v, want ErrCaptchaUnavailable", err)
		}
	}
	if err != nil && !strings.HasPrefix(err.Error(), "captcha: ") {
		t.Errorf("error %q lacks the package prefix", err)
	}
}

func TestVerify(t *testing.T) {
	ip := netip.MustParseAddr("203.0.113.7")
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			tests := []struct {
				scenario   string
				onlyAction bool // the variant's answers carry an action
				onlyScore  bool
				failOpen   bool
				want       outcome
				spent      bool
			}{
				{scenario: "ok", want: pass},
				{scenario: "bad", want: failed},
				{scenario: "wronghost", want: failed},
				{scenario: "nohost", want: failed},
				{scenario: "wrongaction", onlyAction: true, want: failed},
				{scenario: "old", want: failed, spent: true},
				{scenario: "lowscore", onlyScore: true, want: failed},
				{scenario: "5xx", want: unavailable},
				{scenario: "5xx", failOpen: true, want: pass},
				{scenario: "429", want: unavailable},
				{scenario: "429", failOpen: true, want: pass},
				{scenario: "slow", want: unavailable},
				{scenario: "slow", failOpen: true, want: pass},
				{scenario: "malformed", want: unavailable},
				{scenario: "malformed", failOpen: true, want: pass},
				{scenario: "huge", want: unavailable},
				// An explicit refusal never fails open.
				{scenario: "bad", failOpen: true, want: failed},
				{scenario: "wronghost", failOpen: true, want: failed},
			}
			f := newFake(t, v.kind)
			f.action = v.action
			closed := build(t, v.kind, section(f, v, ""), plugins.Env{})
			open := build(t, v.kind, section(f, v, "fail_open: true\n"), plugins.Env{})
			for i, tc := range tests {
				if tc.onlyAction && !v.hasAction || tc.onlyScore && !v.hasScore {
					continue
				}
				t.Run(fmt.Sprintf("%s/fail_open=%v", tc.scenario, tc.failOpen), func(t *testing.T) {
					p := closed
					if tc.failOpen {
						p = open
					}
					err := p.Verify(context.Background(), fmt.Sprintf("%s-%d", tc.scenario, i), ip)
					check(t, err, tc.want)
					if got := errors.Is(err, ErrTokenSpent); got != tc.spent {
						t.Errorf("errors.Is(%v, ErrTokenSpent) = %v, want %v", err, got, tc.spent)
					}
					if got := f.LastIP(); got != ip.String() {
						t.Errorf("remoteip sent = %q, want %q", got, ip)
					}
				})
			}
		})
	}
}

func TestVerifyWildcardHostname(t *testing.T) {
	for _, tc := range []struct {
		host string
		want outcome
	}{
		{"m.shop.example.com", pass},
		{"A.Shop.Example.COM", pass},
		{"shop.example.com", failed}, // *. does not cover the apex
		{"TICKETS.example.com", pass},
		{"xshop.example.com", failed},
		{"tickets.example.com.evil.net", failed},
	} {
		t.Run(tc.host, func(t *testing.T) {
			f := newFake(t, Turnstile)
			f.hostname = tc.host
			p := build(t, Turnstile, section(f, variants[0], ""), plugins.Env{})
			check(t, p.Verify(context.Background(), "ok-1", netip.Addr{}), tc.want)
		})
	}
}

func TestVerifyDuplicate(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			f := newFake(t, v.kind)
			f.action = v.action
			p := build(t, v.kind, section(f, v, "fail_open: true\n"), plugins.Env{})
			check(t, p.Verify(context.Background(), "ok-twice", netip.Addr{}), pass)
			err := p.Verify(context.Background(), "ok-twice", netip.Addr{})
			check(t, err, failed)
			if !errors.Is(err, ErrTokenSpent) {
				t.Errorf("second Verify = %v, want ErrTokenSpent", err)
			}
			if f.LastIP() != "" {
				t.Errorf("remoteip %q sent for an unknown address", f.LastIP())
			}
		})
	}
}

func TestVerifyReplayGuard(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			f := newFake(t, v.kind)
			f.action = v.action
			guard := newMemReplay()
			p := build(t, v.kind, section(f, v, ""), plugins.Env{Replay: guard})
			check(t, p.Verify(context.Background(), "ok-once", netip.Addr{}), pass)
			err := p.Verify(context.Background(), "ok-once", netip.Addr{})
			check(t, err, failed)
			if !errors.Is(err, ErrTokenSpent) {
				t.Errorf("replayed Verify = %v, want ErrTokenSpent", err)
			}
			if got := f.Calls(); got != 1 {
				t.Errorf("provider asked %d times, want 1: a replay must stop at the guard", got)
			}
			if len(guard.used) != 1 {
				t.Errorf("guard holds %d ids, want 1", len(guard.used))
			}
			for id, exp := range guard.used {
				if len(id) != 32 {
					t.Errorf("guard id is %d bytes, want a SHA-256", len(id))
				}
				if d := time.Until(exp); d < time.Minute || d > 7*time.Minute {
					t.Errorf("guard expiry in %s, want about max_age", d)
				}
			}
		})
	}
}

// The same with the process's real in-memory guard, sized as waitroom
// must size it for CAPTCHA tokens: a window of the longest max_age plus
// a minute.
func TestVerifyReplayGuardMemstore(t *testing.T) {
	guard := memstore.New(memstore.Options{Window: DefaultTurnstileMaxAge + time.Minute})
	t.Cleanup(func() { _ = guard.Close() })
	f := newFake(t, Turnstile)
	f.action = "join"
	p := build(t, Turnstile, section(f, variants[0], "fail_open: true\n"), plugins.Env{Replay: guard})
	var wg sync.WaitGroup
	var mu sync.Mutex
	passed := 0
	for range 8 {
		wg.Go(func() {
			if p.Verify(context.Background(), "5xx-race", netip.Addr{}) == nil {
				mu.Lock()
				passed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if passed != 1 {
		t.Errorf("%d of 8 concurrent uses of one token passed, want 1", passed)
	}
}

// With fail_open, an outage would let one token in again and again; the
// guard stops that.
func TestVerifyReplayGuardFailOpen(t *testing.T) {
	f := newFake(t, Turnstile)
	f.action = "join"
	p := build(t, Turnstile, section(f, variants[0], "fail_open: true\n"), plugins.Env{Replay: newMemReplay()})
	check(t, p.Verify(context.Background(), "5xx-x", netip.Addr{}), pass)
	err := p.Verify(context.Background(), "5xx-x", netip.Addr{})
	check(t, err, failed)
}

// A guard that cannot answer leaves single use to the provider.
func TestVerifyReplayGuardDown(t *testing.T) {
	f := newFake(t, Turnstile)
	f.action = "join"
	guard := newMemReplay()
	guard.fail = errors.New("redis: connection refused")
	p := build(t, Turnstile, section(f, variants[0], ""), plugins.Env{Replay: guard})
	check(t, p.Verify(context.Background(), "ok-1", netip.Addr{}), pass)
	check(t, p.Verify(context.Background(), "ok-1", netip.Addr{}), failed)
}

func TestVerifyWrongSecret(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			f := newFake(t, v.kind)
			f.action = v.action
			s := strings.Replace(section(f, v, "fail_open: true\n"), f.secret, "not-the-secret", 1)
			p := build(t, v.kind, s, plugins.Env{})
			err := p.Verify(context.Background(), "ok-1", netip.Addr{})
			check(t, err, failed)
			if !errors.Is(err, ErrMisconfigured) {
				t.Errorf("Verify = %v, want ErrMisconfigured", err)
			}
		})
	}
}

func TestVerifyRefusedUnasked(t *testing.T) {
	f := newFake(t, Turnstile)
	p := build(t, Turnstile, section(f, variants[0], ""), plugins.Env{})
	for _, token := range []string{"", strings.Repeat("x", 2049)} {
		check(t, p.Verify(context.Background(), token, netip.Addr{}), failed)
	}
	if f.Calls() != 0 {
		t.Errorf("provider asked %d times", f.Calls())
	}
}

func TestVerifyMappedIP(t *testing.T) {
	f := newFake(t, HCaptcha)
	p := build(t, HCaptcha, section(f, variants[1], ""), plugins.Env{})
	check(t, p.Verify(context.Background(), "ok-1", netip.MustParseAddr("::ffff:198.51.100.1")), pass)
	if got := f.LastIP(); got != "198.51.100.1" {
		t.Errorf("remoteip = %q", got)
	}
}

// The caller giving up is not a provider outage: no verdict, even with
// fail_open.
func TestVerifyCallerCanceled(t *testing.T) {
	f := newFake(t, Turnstile)
	s := strings.Replace(section(f, variants[0], "fail_open: true\n"), "timeout: 200ms", "timeout: 5s", 1)
	p := build(t, Turnstile, s, plugins.Env{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := p.Verify(ctx, "slow-1", netip.Addr{})
	if !errors.Is(err, challenge.ErrCaptchaUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Verify = %v, want ErrCaptchaUnavailable and the context's error", err)
	}
}

func TestVerifyUnreachable(t *testing.T) {
	f := newFake(t, Turnstile)
	url := f.srv.URL
	f.srv.Close()
	for _, open := range []bool{false, true} {
		s := strings.Replace(section(f, variants[0], fmt.Sprintf("fail_open: %v\n", open)), f.srv.URL, url, 1)
		p := build(t, Turnstile, s, plugins.Env{})
		want := unavailable
		if open {
			want = pass
		}
		check(t, p.Verify(context.Background(), "ok-1", netip.Addr{}), want)
	}
}

func TestWidget(t *testing.T) {
	turnstileCSP := challenge.CSPSources{Script: []string{"https://challenges.cloudflare.com"}, Frame: []string{"https://challenges.cloudflare.com"}}
	hcaptchaHosts := []string{"https://hcaptcha.com", "https://*.hcaptcha.com"}
	hcaptchaCSP := challenge.CSPSources{Script: hcaptchaHosts, Frame: hcaptchaHosts, Style: hcaptchaHosts, Connect: hcaptchaHosts}
	recaptchaCSP := challenge.CSPSources{Script: []string{"https://www.google.com/recaptcha/", "https://www.gstatic.com/recaptcha/"},
		Frame: []string{"https://www.google.com/recaptcha/", "https://recaptcha.google.com/recaptcha/"}}
	for _, tc := range []struct {
		name, kind, extra string
		want              challenge.Widget
	}{
		{"turnstile", Turnstile, "", challenge.Widget{Kind: "turnstile", SiteKey: "site-key", ScriptURL: DefaultTurnstileScriptURL, CSP: turnstileCSP}},
		{"turnstile action", Turnstile, "action: join\n", challenge.Widget{Kind: "turnstile", SiteKey: "site-key", ScriptURL: DefaultTurnstileScriptURL, Action: "join", CSP: turnstileCSP}},
		{"hcaptcha", HCaptcha, "", challenge.Widget{Kind: "hcaptcha", SiteKey: "site-key", ScriptURL: "https://js.hcaptcha.com/1/api.js", CSP: hcaptchaCSP}},
		{"recaptcha v2", ReCAPTCHA, "version: 2\n", challenge.Widget{Kind: "recaptcha", SiteKey: "site-key", ScriptURL: "https://www.google.com/recaptcha/api.js", CSP: recaptchaCSP}},
		{"recaptcha v3", ReCAPTCHA, "action: waiting_room/join\n", challenge.Widget{Kind: "recaptcha", SiteKey: "site-key",
			ScriptURL: "https://www.google.com/recaptcha/api.js?render=site-key", Action: "waiting_room/join", CSP: recaptchaCSP}},
		// Google's documented alternative where www.google.com is blocked:
		// the google.com sources follow the script to recaptcha.net.
		{"recaptcha.net", ReCAPTCHA, "version: 2\nscript_url: https://www.recaptcha.net/recaptcha/api.js\n", challenge.Widget{Kind: "recaptcha", SiteKey: "site-key",
			ScriptURL: "https://www.recaptcha.net/recaptcha/api.js", CSP: challenge.CSPSources{
				Script: []string{"https://www.recaptcha.net/recaptcha/", "https://www.gstatic.com/recaptcha/"},
				Frame:  []string{"https://www.recaptcha.net/recaptcha/", "https://recaptcha.google.com/recaptcha/"}}}},
		{"recaptcha.net v3 with a query", ReCAPTCHA, "action: join\nscript_url: https://www.recaptcha.net/recaptcha/api.js?hl=de\n", challenge.Widget{Kind: "recaptcha", SiteKey: "site-key",
			ScriptURL: "https://www.recaptcha.net/recaptcha/api.js?hl=de&render=site-key", Action: "join", CSP: challenge.CSPSources{
				Script: []string{"https://www.recaptcha.net/recaptcha/", "https://www.gstatic.com/recaptcha/"},
				Frame:  []string{"https://www.recaptcha.net/recaptcha/", "https://recaptcha.google.com/recaptcha/"}}}},
		// A local fake: Cloudflare's origin becomes the fake's, for the
		// script and the widget's frame.
		{"turnstile loopback", Turnstile, "script_url: http://127.0.0.1:8081/turnstile/v0/api.js\n", challenge.Widget{Kind: "turnstile", SiteKey: "site-key",
			ScriptURL: "http://127.0.0.1:8081/turnstile/v0/api.js", CSP: challenge.CSPSources{
				Script: []string{"http://127.0.0.1:8081"}, Frame: []string{"http://127.0.0.1:8081"}}}},
		{"turnstile fedramp", Turnstile, "script_url: https://challenges.fed.cloudflare.com/turnstile/v0/api.js\n", challenge.Widget{Kind: "turnstile", SiteKey: "site-key",
			ScriptURL: "https://challenges.fed.cloudflare.com/turnstile/v0/api.js", CSP: challenge.CSPSources{
				Script: []string{"https://challenges.fed.cloudflare.com"}, Frame: []string{"https://challenges.fed.cloudflare.com"}}}},
		// Another hCaptcha script host is covered by *.hcaptcha.com; one
		// elsewhere is added as a script source.
		{"hcaptcha subdomain", HCaptcha, "script_url: https://cn1.hcaptcha.com/1/api.js\n", challenge.Widget{Kind: "hcaptcha", SiteKey: "site-key",
			ScriptURL: "https://cn1.hcaptcha.com/1/api.js", CSP: hcaptchaCSP}},
		{"hcaptcha elsewhere", HCaptcha, "script_url: https://captcha.example.com:8443/1/api.js\n", challenge.Widget{Kind: "hcaptcha", SiteKey: "site-key",
			ScriptURL: "https://captcha.example.com:8443/1/api.js", CSP: challenge.CSPSources{
				Script: append(slices.Clone(hcaptchaHosts), "https://captcha.example.com:8443"), Frame: hcaptchaHosts, Style: hcaptchaHosts, Connect: hcaptchaHosts}}},
		{"recaptcha other path", ReCAPTCHA, "version: 2\nscript_url: https://www.google.com/js/api.js\n", challenge.Widget{Kind: "recaptcha", SiteKey: "site-key",
			ScriptURL: "https://www.google.com/js/api.js", CSP: challenge.CSPSources{
				Script: append(slices.Clone(recaptchaCSP.Script), "https://www.google.com"), Frame: recaptchaCSP.Frame}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := build(t, tc.kind, "site_key: site-key\nsecret: s\nhostnames: [example.com]\n"+tc.extra, plugins.Env{})
			got := p.Widget()
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Widget() = %+v\nwant %+v", got, tc.want)
			}
			// The sources are for the server's policy, never the page's JSON.
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "Script") || strings.Contains(string(b), "csp") {
				t.Errorf("the widget's JSON carries its CSP sources: %s", b)
			}
		})
	}
}

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		src, target string
		want        bool
	}{
		{"https://challenges.cloudflare.com", "https://challenges.cloudflare.com/turnstile/v0/api.js", true},
		{"https://*.hcaptcha.com", "https://js.hcaptcha.com/1/api.js", true},
		{"https://*.hcaptcha.com", "https://hcaptcha.com/1/api.js", false},
		{"https://*.hcaptcha.com", "https://js.hcaptcha.com.evil.net/1/api.js", false},
		{"https://www.google.com/recaptcha/", "https://www.google.com/recaptcha/api.js?render=k", true},
		{"https://www.google.com/recaptcha/", "https://www.google.com/recaptcha2/api.js", false},
		{"https://www.google.com/recaptcha/api.js", "https://www.google.com/recaptcha/api.js", true},
		{"https://www.google.com", "http://www.google.com/recaptcha/api.js", false},
		{"http://127.0.0.1:8081", "http://127.0.0.1:8082/api.js", false},
		{"http://127.0.0.1:8081", "http://127.0.0.1:8081/api.js", true},
	} {
		if got := covers(tc.src, tc.target); got != tc.want {
			t.Errorf("covers(%q, %q) = %v, want %v", tc.src, tc.target, got, tc.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	for _, tc := range []struct {
		kind, extra string
		maxAge      time.Duration
		url, script string
		minScore    float64
	}{
		{Turnstile, "", 5 * time.Minute, DefaultTurnstileVerifyURL, DefaultTurnstileScriptURL, 0},
		{HCaptcha, "", 2 * time.Minute, DefaultHCaptchaVerifyURL, DefaultHCaptchaScriptURL, 0},
		{ReCAPTCHA, "action: join\n", 2 * time.Minute, DefaultReCAPTCHAVerifyURL, DefaultReCAPTCHAScriptURL, 0.5},
		{ReCAPTCHA, "version: 2\n", 2 * time.Minute, DefaultReCAPTCHAVerifyURL, DefaultReCAPTCHAScriptURL, 0},
	} {
		p := build(t, tc.kind, "site_key: k\nsecret: s\nhostnames: [example.com]\n"+tc.extra, plugins.Env{}).(*Provider)
		if p.cfg.MaxAge != tc.maxAge || p.cfg.VerifyURL != tc.url || p.cfg.Timeout != DefaultTimeout || p.cfg.MinScore != tc.minScore ||
			p.cfg.ScriptURL != tc.script {
			t.Errorf("%s %q: resolved %+v", tc.kind, tc.extra, p.cfg)
		}
	}
}

func TestValidate(t *testing.T) {
	const base = "site_key: k\nsecret: s\nhostnames: [example.com]\n"
	tests := []struct {
		name, kind, section string
		paths               []string // field paths of the expected errors; none: valid
	}{
		{"turnstile minimal", Turnstile, base, nil},
		{"hcaptcha minimal", HCaptcha, base, nil},
		{"recaptcha v3 minimal", ReCAPTCHA, base + "action: join\n", nil},
		{"recaptcha v2 minimal", ReCAPTCHA, base + "version: 2\n", nil},
		{"everything", Turnstile, base + "action: join-now\nmax_age: 1m\ntimeout: 500ms\nfail_open: true\nverify_url: https://verify.internal/siteverify\n", nil},
		{"http loopback", HCaptcha, base + "verify_url: http://127.0.0.1:9000/siteverify\n", nil},
		{"empty section", Turnstile, "{}", []string{"site_key", "secret", "hostnames"}},
		{"unknown key", Turnstile, base + "sitekey: x\n", []string{""}},
		{"every problem at once", Turnstile,
			"site_key: 'a b'\nsecret: ' s'\nhostnames: ['https://example.com', '', 'a.*.com', ok.com, OK.com]\naction: 'no spaces'\nversion: 3\nmin_score: 0.3\nmax_age: 1h\ntimeout: 1ms\nverify_url: http://example.com/v\nscript_url: http://example.com/api.js\n",
			[]string{"site_key", "secret", "hostnames[0]", "hostnames[1]", "hostnames[2]", "hostnames[4]", "version", "action", "min_score", "max_age", "timeout", "verify_url", "script_url"}},
		{"unexpanded secret", HCaptcha, "site_key: k\nsecret: ${HCAPTCHA_SECRET}\nhostnames: [example.com]\n", []string{"secret"}},
		{"hcaptcha action", HCaptcha, base + "action: join\n", []string{"action"}},
		{"recaptcha v3 needs action", ReCAPTCHA, base, []string{"action"}},
		{"recaptcha v2 no action", ReCAPTCHA, base + "version: 2\naction: join\n", []string{"action"}},
		{"recaptcha v2 no score", ReCAPTCHA, base + "version: 2\nmin_score: 0.7\n", []string{"min_score"}},
		{"recaptcha bad version", ReCAPTCHA, base + "version: 4\n", []string{"version"}},
		{"recaptcha score range", ReCAPTCHA, base + "action: a\nmin_score: 1.5\n", []string{"min_score"}},
		{"recaptcha action chars", ReCAPTCHA, base + "action: join-now\n", []string{"action"}},
		{"turnstile action length", Turnstile, base + "action: " + strings.Repeat("a", 33) + "\n", []string{"action"}},
		{"verify_url ftp", Turnstile, base + "verify_url: ftp://example.com/\n", []string{"verify_url"}},
		{"script_url recaptcha.net", ReCAPTCHA, base + "version: 2\nscript_url: https://www.recaptcha.net/recaptcha/api.js\n", nil},
		{"script_url with a language", HCaptcha, base + "script_url: https://js.hcaptcha.com/1/api.js?hl=de\n", nil},
		{"script_url http loopback", Turnstile, base + "script_url: http://127.0.0.1:9000/turnstile/v0/api.js\n", nil},
		{"script_url http ipv6 loopback", Turnstile, base + "script_url: http://[::1]:9000/api.js\n", nil},
		{"script_url http", Turnstile, base + "script_url: http://challenges.cloudflare.com/turnstile/v0/api.js\n", []string{"script_url"}},
		{"script_url relative", Turnstile, base + "script_url: /turnstile/api.js\n", []string{"script_url"}},
		{"script_url user info", HCaptcha, base + "script_url: https://user:pw@js.hcaptcha.com/1/api.js\n", []string{"script_url"}},
		{"script_url fragment", HCaptcha, base + "script_url: https://js.hcaptcha.com/1/api.js#x\n", []string{"script_url"}},
		{"script_url odd host", HCaptcha, base + "script_url: \"https://js.hcaptcha.com;script-src/1/api.js\"\n", []string{"script_url"}},
		{"script_url wildcard host", HCaptcha, base + "script_url: \"https://*.hcaptcha.com/1/api.js\"\n", []string{"script_url"}},
		{"script_url bad port", Turnstile, base + "script_url: https://challenges.cloudflare.com:99999/api.js\n", []string{"script_url"}},
		{"script_url port zero", Turnstile, base + "script_url: https://challenges.cloudflare.com:0/api.js\n", []string{"script_url"}},
		{"script_url empty port", Turnstile, base + "script_url: \"https://challenges.cloudflare.com:/api.js\"\n", []string{"script_url"}},
		{"script_url underscore host", HCaptcha, base + "script_url: https://js_1.hcaptcha.com/1/api.js\n", []string{"script_url"}},
		{"script_url dash label", HCaptcha, base + "script_url: https://-js.hcaptcha.com/1/api.js\n", []string{"script_url"}},
		{"script_url with a port", HCaptcha, base + "script_url: https://js.hcaptcha.com:8443/1/api.js\n", nil},
		{"script_url render", ReCAPTCHA, base + "action: join\nscript_url: https://www.google.com/recaptcha/api.js?render=k\n", []string{"script_url"}},
		{"script_url onload", Turnstile, base + "script_url: https://challenges.cloudflare.com/turnstile/v0/api.js?onload=f\n", []string{"script_url"}},
		{"bad duration", Turnstile, base + "timeout: 3\n", []string{""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tc.section), &doc); err != nil {
				t.Fatal(err)
			}
			err := plugins.Captcha.Validate(tc.kind, doc.Content[0])
			var got []string
			for _, fe := range plugins.FieldErrors(err) {
				got = append(got, fe.Path)
			}
			if !slices.Equal(got, tc.paths) {
				t.Errorf("Validate error paths = %q, want %q\n%v", got, tc.paths, err)
			}
		})
	}
}

func TestParseTime(t *testing.T) {
	want := time.Date(2024, 1, 2, 15, 4, 5, 0, time.UTC)
	for _, s := range []string{"2024-01-02T15:04:05Z", "2024-01-02T15:04:05.000Z", "2024-01-02T15:04:05.000000Z", "2024-01-02T16:04:05+01:00", "2024-01-02T10:04:05-0500"} {
		got, ok := parseTime(s)
		if !ok || !got.Equal(want) {
			t.Errorf("parseTime(%q) = %v, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "yesterday", "1704207845", "2024-01-02 15:04:05"} {
		if _, ok := parseTime(s); ok {
			t.Errorf("parseTime(%q) ok", s)
		}
	}
}
