package captcha

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

// FuzzResponse feeds arbitrary siteverify answers to the parser and to
// every provider's judgement: neither may panic, and nothing but a
// success for an allowed hostname, action, age and score may pass.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		`{"success":true,"challenge_ts":"2024-01-02T15:04:05.274Z","hostname":"example.com","error-codes":[],"action":"join","cdata":"x","metadata":{"interactive":false}}`,
		`{"success":true,"challenge_ts":"2024-01-02T15:04:05Z","hostname":"example.com","score":0.9,"action":"join"}`,
		`{"success":true,"challenge_ts":"2024-01-02T15:04:05.000000Z","hostname":"example.com","credit":false,"score":0.1,"score_reason":["safe"]}`,
		`{"success":false,"error-codes":["timeout-or-duplicate"]}`,
		`{"success":false,"error-codes":["invalid-or-already-seen-response"]}`,
		`{"success":"true"}`, `{}`, `[]`, `null`, `{"success":true,"score":1e400}`, "",
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2024, 1, 2, 15, 5, 0, 0, time.UTC)
	var providers []*Provider
	for _, c := range []struct {
		kind string
		cfg  Config
	}{
		{Turnstile, Config{Action: "join"}},
		{HCaptcha, Config{}},
		{ReCAPTCHA, Config{Action: "join"}},
		{ReCAPTCHA, Config{Version: 2}},
	} {
		c.cfg.SiteKey, c.cfg.Secret, c.cfg.Hostnames = "k", "s", []string{"example.com"}
		p, err := New(c.kind, c.cfg, plugins.Env{})
		if err != nil {
			f.Fatal(err)
		}
		providers = append(providers, p)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := parseResponse(body)
		if err != nil {
			if r != nil {
				t.Fatal("parseResponse returned a response with an error")
			}
			return
		}
		for _, p := range providers {
			err := p.judge(r, now)
			if err == nil {
				ts, _ := parseTime(r.ChallengeTS)
				if !r.Success || !strings.EqualFold(r.Hostname, "example.com") || now.Sub(ts) > p.cfg.MaxAge {
					t.Fatalf("%s passed %+v", p.spec.kind, r)
				}
				continue
			}
			if !errors.Is(err, challenge.ErrCaptchaFailed) {
				t.Fatalf("%s: judge = %v, not ErrCaptchaFailed", p.spec.kind, err)
			}
		}
	})
}
