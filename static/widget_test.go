package static

import (
	"bytes"
	"testing"
)

// The room page's script config carries the provider's description of
// its widget, and nothing for an event without one.
func TestRoomConfigCarriesTheWidget(t *testing.T) {
	p := mustNew(t, summer(), PageConfig{Event: "cap", Widget: WidgetScript{API: "grecaptcha", WaitReady: true, Execute: true}},
		PageConfig{Event: "hc", Widget: WidgetScript{API: "hcaptcha"}})
	for _, tc := range []struct{ event, want string }{
		{"summer", ""},
		{"cap", `"captcha":{"api":"grecaptcha","wait_ready":true,"execute":true}`},
		{"hc", `"captcha":{"api":"hcaptcha"}`},
	} {
		for _, lang := range Languages() {
			page := p.Room(tc.event, []byte(lang))
			got := bytes.Contains(page, []byte(`"captcha":`))
			if tc.want == "" && got {
				t.Errorf("%s (%s): a page without a widget describes one", tc.event, lang)
			}
			if tc.want != "" && !bytes.Contains(page, []byte(tc.want)) {
				t.Errorf("%s (%s): the page's config lacks %s", tc.event, lang, tc.want)
			}
		}
	}
}
