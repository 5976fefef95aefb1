package static_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/waitroom/waitroom/internal/testkit/browsertest"
	"github.com/waitroom/waitroom/static"
)

// acmeJS is a CAPTCHA provider's widget script that no part of waitroom
// knows by name: it defines the global %[1]s with the explicit rendering
// API, and records how the page drove it.
const acmeJS = `window.%[1]s = {
  calls: [],
  ready: function (fn) { this.calls.push("ready"); setTimeout(fn, 0); },
  render: function (el, opts) {
    this.calls.push("render:" + opts.sitekey + ":" + (opts.action || "") + ":" + (el.id || ""));
    setTimeout(function () { opts.callback("tok-render"); }, 0);
    return 7;
  },
  reset: function () { this.calls.push("reset"); },
  execute: function (key, opts) {
    this.calls.push("execute:" + key + ":" + opts.action);
    return Promise.resolve("tok-execute");
  }
};`

// TestWidgetFromProviderData: the room script drives a CAPTCHA widget
// only as its provider describes it (PageConfig.Widget): a provider the
// script has never heard of renders, waits for ready() when asked, or is
// executed for its action.
func TestWidgetFromProviderData(t *testing.T) {
	var mu sync.Mutex
	joins := map[string][]map[string]any{}
	var srv *httptest.Server
	mux := http.NewServeMux()
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	cases := []struct {
		event  string
		widget static.WidgetScript
		action string
		token  string
		calls  string
	}{
		{"plain", static.WidgetScript{API: "acmeWidget"}, "", "tok-render", "render:sk-plain::wr-captcha"},
		{"ready", static.WidgetScript{API: "acme_ready$", WaitReady: true}, "join", "tok-render", "ready,render:sk-ready:join:wr-captcha"},
		{"score", static.WidgetScript{API: "AcmeScore", WaitReady: true, Execute: true}, "queue/join", "tok-execute", "ready,execute:sk-score:queue/join"},
	}
	var cfgs []static.PageConfig
	for _, c := range cases {
		cfgs = append(cfgs, static.PageConfig{Event: c.event, Widget: c.widget,
			WidgetCSP: static.CSPSources{Script: []string{srv.URL}}})
	}
	pages, err := static.New(cfgs)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		mux.HandleFunc("GET /"+c.event+"/acme.js", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprintf(w, acmeJS, c.widget.API)
		})
		mux.HandleFunc("GET /events/"+c.event, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", static.ContentTypeHTML)
			w.Header().Set("Content-Security-Policy", pages.RoomCSP(c.event))
			w.Write(pages.Room(c.event, nil))
		})
	}
	mux.HandleFunc("GET /_wr/api/challenge", func(w http.ResponseWriter, r *http.Request) {
		ev := r.URL.Query().Get("event")
		for _, c := range cases {
			if c.event == ev {
				writeJSON(w, 200, map[string]any{"event": ev, "action": "captcha", "captcha": map[string]any{
					"kind": "acme", "site_key": "sk-" + ev, "script_url": srv.URL + "/" + ev + "/acme.js", "action": c.action}})
				return
			}
		}
		writeJSON(w, 400, map[string]string{"error": "unknown_event", "message": "no such event"})
	})
	mux.HandleFunc("POST /_wr/api/join", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeJSON(w, 400, map[string]string{"error": "bad_request", "message": "bad join"})
			return
		}
		ev, _ := body["event"].(string)
		mu.Lock()
		joins[ev] = append(joins[ev], body)
		mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "wr_ticket", Value: "t", Path: "/", HttpOnly: true})
		writeJSON(w, 200, map[string]any{"event": ev, "status": "waiting", "position": 3, "position_display": "exact",
			"eta_seconds": 60, "refresh_seconds": 30, "lane": "public"})
	})
	mux.HandleFunc("GET /_wr/api/status", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"event": r.URL.Query().Get("event"), "status": "waiting", "position": 3,
			"position_display": "exact", "eta_seconds": 60, "refresh_seconds": 30, "lane": "public"})
	})

	b := browsertest.Start(t)
	for _, c := range cases {
		t.Run(c.event, func(t *testing.T) {
			ctx := b.NewTab(t)
			browsertest.Navigate(t, ctx, srv.URL+"/events/"+c.event)
			waitText(t, ctx, "wr-position", "3 people ahead of you")
			if got := browsertest.Eval[string](t, ctx, "window."+c.widget.API+".calls.join()"); got != c.calls {
				t.Errorf("the widget was driven as %q, want %q", got, c.calls)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(joins[c.event]) != 1 || joins[c.event][0]["captcha"] != c.token {
				t.Errorf("joins %v; want one with captcha %q", joins[c.event], c.token)
			}
		})
	}
}
