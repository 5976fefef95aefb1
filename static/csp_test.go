package static

import (
	"strings"
	"testing"
)

func TestCSP(t *testing.T) {
	p := mustNew(t, summer(), PageConfig{Event: "pink", Colors: Colors{Accent: "deeppink"}})
	csp := p.CSP()
	for _, page := range [][]byte{p.Room("summer", nil), p.Room("pink", []byte("es")), p.Busy(nil), p.Blocked("summer", nil), p.Blocked("", nil), p.Draw("summer", nil), p.Draw("pink", []byte("de")), p.Maintenance("summer", []byte("de"))} {
		scripts, styles, err := inlineBlocks(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range scripts {
			if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, hashSource(s)) {
				t.Errorf("CSP lacks the hash of a script of the page")
			}
		}
		for _, s := range styles {
			if !strings.Contains(csp, hashSource(s)) {
				t.Errorf("CSP lacks the hash of a style of the page")
			}
		}
	}
	for _, want := range []string{"default-src 'none'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP lacks %s: %s", want, csp)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("CSP allows something unsafe: %s", csp)
	}
}

// An event with a CAPTCHA widget gets its sources in its room page's
// policy; everything else keeps the strict one.
func TestRoomCSP(t *testing.T) {
	hc := []string{"https://hcaptcha.com", "https://*.hcaptcha.com"}
	p := mustNew(t, summer(),
		PageConfig{Event: "turnstile", WidgetCSP: CSPSources{Script: []string{"https://challenges.cloudflare.com"}, Frame: []string{"https://challenges.cloudflare.com"}}},
		PageConfig{Event: "hcaptcha", WidgetCSP: CSPSources{Script: hc, Frame: hc, Style: hc, Connect: hc}},
		PageConfig{Event: "local", WidgetCSP: CSPSources{Script: []string{"http://127.0.0.1:8081", "http://[::1]:8081/w/", "http://localhost"}, Frame: []string{"http://127.0.0.1:8081"}}})
	strict := p.CSP()
	if strings.Contains(strict, "frame-src") {
		t.Errorf("the strict policy allows frames: %s", strict)
	}
	if got := p.RoomCSP("nope"); got != strict {
		t.Errorf("RoomCSP of an unknown event = %s, want CSP()", got)
	}
	// A room page without a widget: the strict policy and WebAssembly
	// (the solver's main-thread search).
	room := strings.Replace(strict, "; style-src", " 'wasm-unsafe-eval'; style-src", 1)
	if got := p.RoomCSP("summer"); got != room || room == strict {
		t.Errorf("RoomCSP(summer) = %s, want %s", got, room)
	}
	directive := func(csp, name string) string {
		for d := range strings.SplitSeq(csp, ";") {
			if f := strings.Fields(d); len(f) > 0 && f[0] == name {
				return strings.Join(f[1:], " ")
			}
		}
		return ""
	}
	for _, tc := range []struct {
		event                         string
		script, frame, style, connect string // the sources added
	}{
		{"turnstile", "https://challenges.cloudflare.com", "https://challenges.cloudflare.com", "", ""},
		{"hcaptcha", "https://hcaptcha.com https://*.hcaptcha.com", "https://hcaptcha.com https://*.hcaptcha.com",
			"https://hcaptcha.com https://*.hcaptcha.com", "https://hcaptcha.com https://*.hcaptcha.com"},
		{"local", "http://127.0.0.1:8081 http://[::1]:8081/w/ http://localhost", "http://127.0.0.1:8081", "", ""},
	} {
		csp := p.RoomCSP(tc.event)
		for _, d := range []struct{ name, added string }{
			{"script-src", tc.script}, {"style-src", tc.style}, {"connect-src", tc.connect},
		} {
			added := d.added
			if d.name == "script-src" {
				added = strings.TrimSpace("'wasm-unsafe-eval' " + added)
			}
			want := strings.TrimSpace(directive(strict, d.name) + " " + added)
			if got := directive(csp, d.name); got != want {
				t.Errorf("%s: %s = %q, want %q", tc.event, d.name, got, want)
			}
		}
		if got := directive(csp, "frame-src"); got != tc.frame {
			t.Errorf("%s: frame-src = %q, want %q", tc.event, got, tc.frame)
		}
		// The rest is the strict policy's.
		for _, d := range []string{"default-src", "img-src", "worker-src", "font-src", "base-uri", "form-action", "frame-ancestors"} {
			if got, want := directive(csp, d), directive(strict, d); got != want {
				t.Errorf("%s: %s = %q, want %q", tc.event, d, got, want)
			}
		}
		if strings.Count(csp, "unsafe") != 1 || !strings.Contains(directive(csp, "script-src"), "'wasm-unsafe-eval'") {
			t.Errorf("%s: CSP allows something unsafe besides compiling WebAssembly: %s", tc.event, csp)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = p.RoomCSP("hcaptcha") }); n != 0 {
		t.Errorf("RoomCSP allocates %.1f times per call", n)
	}
}

func TestInlineBlocks(t *testing.T) {
	tests := []struct {
		name            string
		html            string
		scripts, styles []string
		err             string
	}{
		{"plain", `<style>a{}</style><script>x()</script>`, []string{"x()"}, []string{"a{}"}, ""},
		{"upper case", `<SCRIPT type="text/javascript">Y()</Script>`, []string{"Y()"}, nil, ""},
		{"json data block", `<script type="application/json" id="c">{"a":1}</script><script>z()</script>`, []string{"z()"}, nil, ""},
		{"module", `<script type=module>m()</script>`, []string{"m()"}, nil, ""},
		{"external", `<script src="/a.js"></script>`, nil, nil, ""},
		{"comment", `<!-- <script>no()</script> --><script>yes()</script>`, []string{"yes()"}, nil, ""},
		{"not a script tag", `<scripts>x</scripts><stylesheet>`, nil, nil, ""},
		{"data attribute mentioning src", `<script data-src="x">d()</script>`, []string{"d()"}, nil, ""},
		{"event handler", `<button onclick="x()">`, nil, nil, "onclick attribute"},
		{"style attribute", `<p class=a style='color:red'>`, nil, nil, "style attribute"},
		{"unclosed", `<script>x()`, nil, nil, "not closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scripts, styles, err := inlineBlocks([]byte(tt.html))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v; want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strs(scripts); strings.Join(got, "|") != strings.Join(tt.scripts, "|") {
				t.Errorf("scripts %q; want %q", got, tt.scripts)
			}
			if got := strs(styles); strings.Join(got, "|") != strings.Join(tt.styles, "|") {
				t.Errorf("styles %q; want %q", got, tt.styles)
			}
		})
	}
}

func strs(bs [][]byte) []string {
	var out []string
	for _, b := range bs {
		out = append(out, string(b))
	}
	return out
}
