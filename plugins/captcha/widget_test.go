package captcha

import (
	"testing"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

// Each provider describes how the page drives its widget, so that the
// page script names no provider.
func TestWidgetScript(t *testing.T) {
	for _, tc := range []struct {
		name, kind, extra string
		want              challenge.WidgetScript
	}{
		{"turnstile", Turnstile, "", challenge.WidgetScript{API: "turnstile"}},
		{"turnstile action", Turnstile, "action: join\n", challenge.WidgetScript{API: "turnstile"}},
		{"hcaptcha", HCaptcha, "", challenge.WidgetScript{API: "hcaptcha"}},
		{"recaptcha v2", ReCAPTCHA, "version: 2\n", challenge.WidgetScript{API: "grecaptcha", WaitReady: true}},
		{"recaptcha v3", ReCAPTCHA, "action: join\n", challenge.WidgetScript{API: "grecaptcha", WaitReady: true, Execute: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := build(t, tc.kind, "site_key: site-key\nsecret: s\nhostnames: [example.com]\n"+tc.extra, plugins.Env{})
			if got := challenge.WidgetScriptOf(p); got != tc.want {
				t.Errorf("WidgetScript = %+v, want %+v", got, tc.want)
			}
		})
	}
}
