package app

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/testkit/browsertest"
	"github.com/waitroom/waitroom/plugins"
	"github.com/waitroom/waitroom/static"
)

// fakeTurnstile is Cloudflare Turnstile as two loopback servers, since
// the real one cannot run here: the widget's origin, serving api.js and
// the widget's iframe, and siteverify, speaking Turnstile's wire format
// (a form POST of secret, response and remoteip, answered with
// {success, challenge_ts, hostname, action, cdata, error-codes}).
//
// The fake api.js defines what waitroom's page uses of the real one:
// turnstile.render(el, opts) puts an iframe from the widget's origin into
// el (so the page's frame-src must allow it) and returns the widget's id;
// a click on the iframe's button calls opts.callback with a token minted
// for that widget; turnstile.reset(id) loads a fresh widget. Like the real
// api.js, turnstile.ready throws when the script was loaded async (as a
// script a page inserts is). Siteverify accepts each token it minted
// once, for the hostname that loaded the widget (from the Referer) and
// the action it was rendered with.
type fakeTurnstile struct {
	t      *testing.T
	secret string
	widget *httptest.Server
	verify *httptest.Server

	mu     sync.Mutex
	minted map[string]mintedToken
	spent  map[string]bool
	calls  []verifyCall
}

type mintedToken struct{ hostname, action, siteKey string }

// verifyCall is one siteverify request as the fake received it.
type verifyCall struct{ secret, response, remoteIP string }

const fakeSiteKey = "1x00000000000000000000AA"

func newFakeTurnstile(t *testing.T) *fakeTurnstile {
	f := &fakeTurnstile{t: t, secret: "0x4AAAAAAA-test-secret-" + randomHex(8),
		minted: map[string]mintedToken{}, spent: map[string]bool{}}
	widget := http.NewServeMux()
	widget.HandleFunc("GET /turnstile/v0/api.js", f.apiJS)
	widget.HandleFunc("GET /widget", f.widgetPage)
	f.widget = httptest.NewServer(widget)
	verify := http.NewServeMux()
	verify.HandleFunc("POST /turnstile/v0/siteverify", f.siteverify)
	f.verify = httptest.NewServer(verify)
	t.Cleanup(func() { f.widget.Close(); f.verify.Close() })
	return f
}

// Calls returns the siteverify requests so far.
func (f *fakeTurnstile) Calls() []verifyCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]verifyCall(nil), f.calls...)
}

// Minted returns the tokens the widgets minted so far.
func (f *fakeTurnstile) Minted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for tok := range f.minted {
		out = append(out, tok)
	}
	return out
}

const fakeAPIJS = `(function () {
  "use strict";
  var me = document.currentScript;
  var origin = new URL(me.src).origin;
  var loadedAsync = me.async || me.defer;
  var n = 0, widgets = {};
  window.turnstile = {
    ready: function (cb) {
      if (loadedAsync) throw new Error("[Cloudflare Turnstile] Remove async/defer from the Turnstile api.js script tag before using turnstile.ready().");
      cb();
    },
    render: function (el, opts) {
      if (typeof el === "string") el = document.querySelector(el);
      var id = "cf-chl-widget-" + (++n);
      var f = document.createElement("iframe");
      f.id = id;
      f.title = "Widget containing a Cloudflare security challenge";
      f.width = "300";
      f.height = "65";
      f.src = origin + "/widget?" + new URLSearchParams({ id: id, sitekey: opts.sitekey || "", action: opts.action || "" });
      el.appendChild(f);
      widgets[id] = { frame: f, opts: opts };
      return id;
    },
    reset: function (id) {
      var w = widgets[id];
      w.frame.removeAttribute("data-ready");
      w.frame.src = w.frame.src;
    },
    remove: function (id) {
      widgets[id].frame.remove();
      delete widgets[id];
    }
  };
  window.addEventListener("message", function (e) {
    var d = e.data, w = d && widgets[d.id];
    if (e.origin !== origin || !w) return;
    if (d.ready) w.frame.setAttribute("data-ready", "1");
    if (d.token) w.opts.callback(d.token);
  });
})();
`

func (f *fakeTurnstile) apiJS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	io.WriteString(w, fakeAPIJS)
}

// widgetPage is the widget's iframe: a button that hands the page a token
// minted for the hostname of the page that framed it.
func (f *fakeTurnstile) widgetPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	host := ""
	if ref, err := url.Parse(r.Referer()); err == nil {
		host = ref.Hostname()
	}
	token := "XXXX.DUMMY.TOKEN." + randomHex(32)
	f.mu.Lock()
	f.minted[token] = mintedToken{hostname: host, action: q.Get("action"), siteKey: q.Get("sitekey")}
	f.mu.Unlock()
	id, _ := json.Marshal(q.Get("id"))
	tok, _ := json.Marshal(token)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><style>body{margin:0}button{width:300px;height:65px;font:16px sans-serif}</style></head>
<body><button id="human" type="button">Verify you are human</button>
<script>
var id = %s, token = %s;
parent.postMessage({ id: id, ready: true }, "*");
document.getElementById("human").addEventListener("click", function () {
  this.textContent = "Success!";
  this.disabled = true;
  parent.postMessage({ id: id, token: token }, "*");
});
</script></body></html>`, id, tok)
}

func (f *fakeTurnstile) siteverify(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		f.t.Errorf("siteverify: Content-Type %q", ct)
	}
	if err := r.ParseForm(); err != nil {
		f.t.Errorf("siteverify: %v", err)
		return
	}
	call := verifyCall{secret: r.PostForm.Get("secret"), response: r.PostForm.Get("response"), remoteIP: r.PostForm.Get("remoteip")}
	f.mu.Lock()
	f.calls = append(f.calls, call)
	minted, known := f.minted[call.response]
	spent := f.spent[call.response]
	f.spent[call.response] = true
	f.mu.Unlock()

	fail := func(code string) {
		writeJSONValue(w, map[string]any{"success": false, "error-codes": []string{code}, "messages": []string{}})
	}
	switch {
	case call.secret == "":
		fail("missing-input-secret")
	case call.secret != f.secret:
		fail("invalid-input-secret")
	case call.response == "":
		fail("missing-input-response")
	case !known || minted.siteKey != fakeSiteKey:
		fail("invalid-input-response")
	case spent:
		fail("timeout-or-duplicate")
	default:
		writeJSONValue(w, map[string]any{
			"success":      true,
			"challenge_ts": time.Now().Add(-time.Second).UTC().Format("2006-01-02T15:04:05.000Z"),
			"hostname":     minted.hostname,
			"error-codes":  []string{},
			"action":       minted.action,
			"cdata":        "",
			"metadata":     map[string]any{"interactive": true},
		})
	}
}

func writeJSONValue(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// withTurnstile configures the fake as bot_defence.captcha "cf" and makes
// it the demo event's CAPTCHA.
func withTurnstile(t *testing.T, f *fakeTurnstile) func(*config.Config) {
	return func(c *config.Config) {
		var n config.NamedPlugin
		n.Name, n.Type = "cf", "turnstile"
		src := fmt.Sprintf(`{site_key: %s, secret: %s, hostnames: [127.0.0.1], action: waitroom-join, timeout: 2s,
			verify_url: "%s/turnstile/v0/siteverify", script_url: "%s/turnstile/v0/api.js"}`, fakeSiteKey, f.secret, f.verify.URL, f.widget.URL)
		if err := yamlNode(&n.Config, src); err != nil {
			t.Fatal(err)
		}
		c.BotDefence.Captcha = append(c.BotDefence.Captcha, n)
		c.Events[0].Challenge.Captcha = "cf"
	}
}

// watchCSP records every Content-Security-Policy violation in the tab,
// across navigations: a securitypolicyviolation listener in every
// document writes them to the console, and the browser's own "Refused
// to …" messages count too. Call it before the first navigation.
func watchCSP(t *testing.T, tab context.Context) func() []string {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	messages := chromedp.Console(tab)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if strings.Contains(m.Text, "waitroom-test CSP violation") || strings.Contains(m.Text, "Content Security Policy") {
				mu.Lock()
				seen = append(seen, m.Text)
				mu.Unlock()
			}
		}
	}()
	tctx, cancel := context.WithTimeout(tab, browsertest.DefaultTimeout)
	defer cancel()
	_, err := chromedp.Run(tctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
			document.addEventListener("securitypolicyviolation", function (e) {
				console.warn("waitroom-test CSP violation: " + e.effectiveDirective + " blocked " + e.blockedURI);
			});`})
		return err
	}))
	if err != nil {
		t.Fatalf("installing the CSP watch: %v", err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// clickWidget clicks, with the mouse as a person would, the button in
// the fake widget's cross-origin iframe once it has loaded.
func clickWidget(t *testing.T, tab context.Context) {
	t.Helper()
	browsertest.WaitFor(t, tab, "the CAPTCHA widget", `!!document.querySelector("#wr-captcha:not([hidden]) iframe[data-ready]")`)
	browsertest.Screenshot(t, tab, "widget")
	xy := browsertest.Eval[[]float64](t, tab, `(() => {
		const f = document.querySelector("#wr-captcha iframe");
		f.scrollIntoView({block: "center"});
		const r = f.getBoundingClientRect();
		return [r.left + r.width / 2, r.top + r.height / 2];
	})()`)
	tctx, cancel := context.WithTimeout(tab, browsertest.DefaultTimeout)
	defer cancel()
	if _, err := chromedp.Run(tctx, chromedp.MouseClickXY(xy[0], xy[1])); err != nil {
		t.Fatalf("clicking the widget: %v", err)
	}
}

// checkRoomPage fetches the room page over plain HTTP: its policy must
// allow the fake's origin for the widget's script and frame and nothing
// unsafe but WebAssembly, and the page must tell a visitor without JavaScript why it
// does not work.
func checkRoomPage(t *testing.T, d *Demo, f *fakeTurnstile) {
	t.Helper()
	req, _ := http.NewRequest("GET", d.URL+"events/demo-concert", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("room page: HTTP %d", resp.StatusCode)
	}
	noscript, _ := static.BuiltinText("en", "noscript")
	// An event with a challenge takes no join without JavaScript: its
	// <noscript> explains, with no form.
	if want := `<p class="note">` + html.EscapeString(noscript) + "</p>\n</noscript>"; !strings.Contains(string(body), want) ||
		strings.Contains(string(body), `id="wr-nojs-join"`) {
		t.Errorf("the room page lacks %s, or has the no-script form", want)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"frame-src " + f.widget.URL + ";", " " + f.widget.URL + "; style-src"} {
		if !strings.Contains(csp, want) {
			t.Errorf("the room page's policy lacks %q: %s", want, csp)
		}
	}
	// Compiling WebAssembly (the solver's main-thread search) is the one
	// "unsafe" source.
	if strings.Contains(strings.Replace(csp, " 'wasm-unsafe-eval'", "", 1), "unsafe") || strings.Contains(csp, f.verify.URL) {
		t.Errorf("the room page's policy allows too much: %s", csp)
	}
}

// checkVerified: siteverify was asked once, with the site's secret, the
// token the widget minted and the visitor's address.
func checkVerified(t *testing.T, f *fakeTurnstile) {
	t.Helper()
	calls, minted := f.Calls(), f.Minted()
	if len(calls) != 1 {
		t.Fatalf("siteverify called %d times, want once: %+v", len(calls), calls)
	}
	c := calls[0]
	if c.secret != f.secret {
		t.Errorf("siteverify got secret %q, want the configured one", c.secret)
	}
	if len(minted) != 1 || c.response != minted[0] {
		t.Errorf("siteverify got token %q; the widget minted %q", c.response, minted)
	}
	if c.remoteIP != "127.0.0.1" {
		t.Errorf("siteverify got remoteip %q, want 127.0.0.1", c.remoteIP)
	}
}

// TestCaptchaBandInChromium: a headless browser with its default profile
// scores into the captcha band, sees the provider's widget (script and
// iframe from the provider's origin, allowed by the event page's policy),
// solves it, joins with its token and is admitted.
func TestCaptchaBandInChromium(t *testing.T) {
	b := browsertest.Start(t)
	tab := b.NewTab(t)
	violations := watchCSP(t, tab)
	f := newFakeTurnstile(t)
	d := startDemo(t, 0, 8*time.Second, withDefence(t), withTurnstile(t, f), func(c *config.Config) {
		// Everything the headless default profile scores (≥ 30, see
		// TestBotsScoreHigh) lands in the captcha band.
		c.Events[0].Challenge.Bands = config.Bands{Captcha: 30}
	})
	checkRoomPage(t, d, f)

	browsertest.Navigate(t, tab, d.URL+"events/demo-concert")
	clickWidget(t, tab)
	browsertest.WaitFor(t, tab, "the countdown after the join", `!document.getElementById("wr-countdown").hidden`)
	browsertest.WaitFor(t, tab, "the shop after admission",
		`location.pathname === "/events/demo-concert" && document.title.includes("Choose your tickets")`)

	checkOneCaptchaJoin(t, d, f, violations, "captcha")
}

// TestCaptchaInsteadOfPoWInChromium: with challenge.nojs_captcha, a person
// whose browser is still on the proof of work picks "solve a CAPTCHA
// instead", solves the widget and joins with its token alone; the proof
// of work is abandoned, not sent as a second join.
func TestCaptchaInsteadOfPoWInChromium(t *testing.T) {
	b := browsertest.Start(t)
	tab := b.NewTab(t, browsertest.AsDesktopChrome())
	violations := watchCSP(t, tab)
	f := newFakeTurnstile(t)
	d := startDemo(t, 0, 12*time.Second, withDefence(t), withTurnstile(t, f), func(c *config.Config) {
		ch := &c.Events[0].Challenge
		ch.NoJSCaptcha = true
		// Seconds of light work (21 bits × 16, 8 times the default, about
		// 4 s here): the visitor has time to give up on it, and a solve
		// that went on regardless would join a second time before the
		// admission.
		ch.Light = config.Work{Bits: 21, Puzzles: 16}
		ch.Heavy = config.Work{Bits: 22, Puzzles: 16}
	})
	checkRoomPage(t, d, f)

	browsertest.Navigate(t, tab, d.URL+"events/demo-concert")
	instead, _ := static.BuiltinText("en", "captcha_instead")
	browsertest.WaitFor(t, tab, "the offer of a CAPTCHA during the proof of work",
		fmt.Sprintf(`!document.getElementById("wr-bar").hidden && !document.getElementById("wr-retry").hidden && document.getElementById("wr-retry").textContent === %q`, instead))
	browsertest.Screenshot(t, tab, "1-proof-of-work")
	tctx, cancel := context.WithTimeout(tab, browsertest.DefaultTimeout)
	_, err := chromedp.Run(tctx, chromedp.Click("#wr-retry"))
	cancel()
	if err != nil {
		t.Fatalf("clicking %q: %v", instead, err)
	}
	clickWidget(t, tab)
	browsertest.WaitFor(t, tab, "the countdown after the join", `!document.getElementById("wr-countdown").hidden`)
	browsertest.WaitFor(t, tab, "the shop after admission",
		`location.pathname === "/events/demo-concert" && document.title.includes("Choose your tickets")`)

	checkOneCaptchaJoin(t, d, f, violations, "light_pow")
}

// checkOneCaptchaJoin checks what a CAPTCHA join leaves behind: the
// provider verified the token, the challenge decided action, exactly one
// join (the page did not join again), no refusal, no CSP violation.
func checkOneCaptchaJoin(t *testing.T, d *Demo, f *fakeTurnstile, violations func() []string, action string) {
	t.Helper()
	checkVerified(t, f)
	m := metrics(t, d)
	for _, want := range []string{
		`waitroom_challenge_decisions_total{action="` + action + `",applied="` + action + `",event="demo-concert"}`,
		`waitroom_joins_total{event="demo-concert",result="joined"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(m, `result="rejoined"`) {
		t.Errorf("the page joined twice:\n%s", grepLines(m, "waitroom_joins_total"))
	}
	if strings.Contains(m, `waitroom_challenge_refusals_total{`) {
		t.Errorf("the bot defence refused a join:\n%s", grepLines(m, "waitroom_challenge_refusals_total"))
	}
	if v := violations(); len(v) > 0 {
		t.Errorf("Content-Security-Policy violations:\n%s", strings.Join(v, "\n"))
	}
}

// TestWidgetCSPAcceptedByPages: whatever script_url a provider accepts,
// the sources its widget asks for are ones the pages accept and put in
// the event's policy, so that a valid configuration cannot fail at start.
func TestWidgetCSPAcceptedByPages(t *testing.T) {
	for _, tc := range []struct{ kind, extra string }{
		{"turnstile", ""},
		{"turnstile", "script_url: https://challenges.fed.cloudflare.com/turnstile/v0/api.js"},
		{"turnstile", "script_url: http://127.0.0.1:8081/turnstile/v0/api.js"},
		{"turnstile", "script_url: 'http://[::1]:8081/api.js'"},
		{"turnstile", "script_url: http://localhost/api.js"},
		{"hcaptcha", ""},
		{"hcaptcha", "script_url: https://captcha.example.com:8443/1/api.js?hl=de"},
		{"recaptcha", "version: 2"},
		{"recaptcha", "action: join"},
		{"recaptcha", "version: 2\nscript_url: https://www.recaptcha.net/recaptcha/api.js"},
	} {
		var n yaml.Node
		if err := yamlNode(&n, "site_key: k\nsecret: s\nhostnames: [example.com]\n"+tc.extra); err != nil {
			t.Fatal(err)
		}
		p, err := plugins.Captcha.Build(context.Background(), tc.kind, &n, plugins.Env{})
		if err != nil {
			t.Fatalf("%s %q: %v", tc.kind, tc.extra, err)
		}
		c := p.Widget().CSP
		pages, err := static.New([]static.PageConfig{{Event: "e",
			WidgetCSP: static.CSPSources{Script: c.Script, Frame: c.Frame, Style: c.Style, Connect: c.Connect}}})
		if err != nil {
			t.Errorf("%s %q: the pages refuse the widget's sources %+v: %v", tc.kind, tc.extra, c, err)
			continue
		}
		for _, src := range slices.Concat(c.Script, c.Frame, c.Style, c.Connect) {
			if !strings.Contains(pages.RoomCSP("e"), " "+src) {
				t.Errorf("%s %q: the room policy lacks %s", tc.kind, tc.extra, src)
			}
		}
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
