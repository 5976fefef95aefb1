package static_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/waitroom/waitroom/internal/testkit/browsertest"
	"github.com/waitroom/waitroom/static"
)

// apiState is what the scripted waiting-room API answers; tests change it
// to walk the page through the states.
type apiState struct {
	Status          string
	Position        int // < 0: null
	Display         string
	ETA, Low, High  int
	Refresh         float64
	Redirect        string
	Reason          string
	Tranche         int
	OnSaleAt        time.Time
	DrawAt          time.Time
	ScheduledUntil  time.Time // joins before it get "scheduled" and no cookie
	NoCookie        bool      // joins set no ticket cookie (a browser that refuses cookies)
	NoPass          bool      // admission sets no pass cookie (a pass the gate refuses)
	FailStatusPolls []int     // answer the next status polls with these codes, one each
}

// scriptedAPI implements the page's side of the contract in
// /tmp/spec/api.md — join, status, the ticket and pass cookies — from a
// script, plus the gated page and an origin page behind it.
type scriptedAPI struct {
	t     testing.TB
	pages *static.Pages
	srv   *httptest.Server

	mu        sync.Mutex
	st        apiState
	joins     []map[string]any
	returns   []string // the return parameters of status polls
	polls     int
	pageLoads int // waiting-room pages served
}

const event = "summer"

func newScriptedAPI(t testing.TB, pages *static.Pages, st apiState) *scriptedAPI {
	a := &scriptedAPI{t: t, pages: pages, st: st}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /_wr/api/join", a.join)
	// The page asks what the bot defence wants before every join; these
	// tests run without one (the real one is internal/app's browser test).
	mux.HandleFunc("GET /_wr/api/challenge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"event":%q,"action":"none"}`, r.URL.Query().Get("event"))
	})
	mux.HandleFunc("GET /_wr/api/status", a.status)
	mux.HandleFunc("GET /_wr/static/{name}", a.asset)
	mux.HandleFunc("GET /busy", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", static.ContentTypeHTML)
		w.Header().Set("Content-Security-Policy", pages.CSP())
		w.Header().Set("Retry-After", fmt.Sprint(static.BusyRetrySeconds))
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write(pages.Busy([]byte(r.Header.Get("Accept-Language"))))
	})
	mux.HandleFunc("GET /members/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", static.ContentTypeHTML)
		w.Header().Set("Content-Security-Policy", pages.CSP())
		w.WriteHeader(http.StatusForbidden)
		w.Write(pages.Blocked(event, []byte(r.Header.Get("Accept-Language"))))
	})
	mux.HandleFunc("GET /logo.svg", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		fmt.Fprint(w, `<svg xmlns="http://www.w3.org/2000/svg" width="160" height="40"><rect width="160" height="40" rx="8" fill="gold"/><text x="80" y="27" font-size="18" text-anchor="middle" font-family="sans-serif">SUMMER</text></svg>`)
	})
	mux.HandleFunc("GET /", a.page)
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *scriptedAPI) set(f func(*apiState)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f(&a.st)
}

func (a *scriptedAPI) url(path string) string { return a.srv.URL + path }

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func (a *scriptedAPI) statusJSON(st apiState, now time.Time) map[string]any {
	m := map[string]any{
		"event": event, "status": st.Status, "position_display": st.Display,
		"eta_seconds": st.ETA, "eta_low": st.Low, "eta_high": st.High,
		"refresh_seconds": st.Refresh, "lane": "public", "tranche": st.Tranche, "tranche_seconds": 3,
		"audit":      fmt.Sprintf("/_wr/api/draws/%s/%d", event, st.Tranche),
		"draw_page":  fmt.Sprintf("/_wr/draw/%s/%d", event, st.Tranche),
		"on_sale_at": st.OnSaleAt.UTC().Format(time.RFC3339Nano),
		"opens_at":   now.Add(-time.Minute).UTC().Format(time.RFC3339),
	}
	if st.Position >= 0 {
		m["position"] = st.Position
	} else {
		m["position"] = nil
	}
	if !st.DrawAt.IsZero() {
		m["draw_at"] = st.DrawAt.UTC().Format(time.RFC3339Nano)
	}
	if st.Status == "admitted" {
		m["redirect"] = st.Redirect
	}
	if st.Reason != "" {
		m["reason"] = st.Reason
	}
	return m
}

func (a *scriptedAPI) join(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&body) != nil || body["event"] != event {
		writeJSON(w, 400, map[string]string{"error": "bad_request", "message": "bad join"})
		return
	}
	a.mu.Lock()
	a.joins = append(a.joins, body)
	st := a.st
	a.mu.Unlock()
	now := time.Now()
	if now.Before(st.ScheduledUntil) {
		m := a.statusJSON(st, now)
		m["status"], m["opens_at"], m["position"] = "scheduled", st.ScheduledUntil.UTC().Format(time.RFC3339Nano), nil
		delete(m, "tranche")
		delete(m, "audit")
		delete(m, "draw_page")
		writeJSON(w, 200, m)
		return
	}
	if !st.NoCookie {
		http.SetCookie(w, &http.Cookie{Name: "wr_ticket", Value: "t-" + fmt.Sprint(len(a.joins)), Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	}
	if st.Status == "scheduled" { // the queue has opened: the pre-queue
		st.Status = "prequeue"
		a.set(func(s *apiState) { s.Status = "prequeue" })
	}
	writeJSON(w, 200, a.statusJSON(st, now))
}

func (a *scriptedAPI) status(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("event") != event {
		writeJSON(w, 400, map[string]string{"error": "unknown_event", "message": "no such event"})
		return
	}
	if _, err := r.Cookie("wr_ticket"); err != nil {
		writeJSON(w, 401, map[string]string{"error": "no_ticket", "message": "join first"})
		return
	}
	a.mu.Lock()
	a.polls++
	a.returns = append(a.returns, r.URL.Query().Get("return"))
	var fail int
	if len(a.st.FailStatusPolls) > 0 {
		fail, a.st.FailStatusPolls = a.st.FailStatusPolls[0], a.st.FailStatusPolls[1:]
	}
	st := a.st
	a.mu.Unlock()
	switch fail {
	case 0:
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
		writeJSON(w, fail, map[string]string{"error": "rate_limited", "message": "slow down"})
		return
	default:
		writeJSON(w, fail, map[string]string{"error": "unavailable", "message": "try again"})
		return
	}
	if st.Status == "admitted" && !st.NoPass {
		http.SetCookie(w, &http.Cookie{Name: "wr_pass", Value: "p", Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	}
	writeJSON(w, 200, a.statusJSON(st, time.Now()))
}

func (a *scriptedAPI) asset(w http.ResponseWriter, r *http.Request) {
	body, ct, ok := a.pages.Asset([]byte(r.PathValue("name")))
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Write(body)
}

// page is the gated site: with a pass the origin's page, without one the
// waiting room, served as the proxy will serve it.
func (a *scriptedAPI) page(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/events/") {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if _, err := r.Cookie("wr_pass"); err == nil {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><meta name="viewport" content="width=device-width"><title>Shop</title><h1 id="origin">Welcome to the sale</h1><p id="path">%s</p>`, r.URL.RequestURI())
		return
	}
	a.mu.Lock()
	a.pageLoads++
	a.mu.Unlock()
	w.Header().Set("Content-Type", static.ContentTypeHTML)
	w.Header().Set("Content-Security-Policy", a.pages.CSP())
	w.Write(a.pages.Room(event, pageLanguage(w, r)))
}

// pageLanguage is what the proxy's pageLanguage does: the switcher's
// ?lang= (kept in the cookie), else the cookie, else Accept-Language.
func pageLanguage(w http.ResponseWriter, r *http.Request) []byte {
	var cookie []byte
	if c, err := r.Cookie(static.LangCookie); err == nil {
		cookie = []byte(c.Value)
	}
	lang, fromQuery := static.Chosen([]byte(r.URL.Query().Get(static.LangQuery)), cookie)
	if lang == nil {
		return []byte(r.Header.Get("Accept-Language"))
	}
	if fromQuery {
		http.SetCookie(w, &http.Cookie{Name: static.LangCookie, Value: string(lang), Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	}
	return lang
}

func (a *scriptedAPI) joined() []map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]map[string]any(nil), a.joins...)
}

// text is the JavaScript for the visible text of the element with id.
func text(id string) string {
	return fmt.Sprintf(`(function(){var e=document.getElementById(%q);return e&&!e.closest("[hidden]")?e.textContent:""})()`, id)
}

func js(s string) string { b, _ := json.Marshal(s); return string(b) }

func waitText(t *testing.T, ctx context.Context, id, want string) {
	t.Helper()
	browsertest.WaitFor(t, ctx, id+" = "+want, text(id)+" === "+js(want))
}

func waitContains(t *testing.T, ctx context.Context, id, want string) {
	t.Helper()
	browsertest.WaitFor(t, ctx, id+" has "+want, text(id)+".includes("+js(want)+")")
}

func TestPageInChromium(t *testing.T) {
	pages, err := static.New([]static.PageConfig{{Event: event, Name: "Summer Tour 2027", JoinPath: "/events/summer"}})
	if err != nil {
		t.Fatal(err)
	}
	b := browsertest.Start(t)

	t.Run("walkthrough", func(t *testing.T) {
		now := time.Now()
		api := newScriptedAPI(t, pages, apiState{
			Status: "scheduled", Position: -1, Display: "exact", ETA: -1, Low: -1, High: -1, Refresh: 0.3,
			ScheduledUntil: now.Add(2500 * time.Millisecond), OnSaleAt: now.Add(time.Hour),
		})
		ctx := b.NewTab(t, browsertest.WithPhone())
		browsertest.Navigate(t, ctx, api.url("/events/summer?seat=A1"))

		// Before the queue opens: a countdown to opens_at, no cookie yet.
		waitText(t, ctx, "wr-headline", "The queue opens soon")
		waitText(t, ctx, "wr-countdown-label", "The queue opens in")
		browsertest.WaitFor(t, ctx, "countdown", `/^0:0[0-3]$/.test(`+text("wr-countdown-value")+`)`)
		if lang := browsertest.Eval[string](t, ctx, `document.documentElement.lang`); lang != "en" {
			t.Errorf("lang=%q", lang)
		}
		if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll("h1").length`); n != 1 {
			t.Errorf("%d h1 elements; want 1", n)
		}
		// The stylesheet and the colours applied under the page's CSP.
		if v := browsertest.Eval[string](t, ctx, `getComputedStyle(document.documentElement).getPropertyValue("--wr-accent").trim()`); v != "#0b57d0" {
			t.Errorf("--wr-accent = %q: the inline style did not apply", v)
		}
		if v := browsertest.Eval[string](t, ctx, `getComputedStyle(document.getElementById("wr-headline")).fontSize`); v != "28px" {
			t.Errorf("headline font size %s: the stylesheet did not apply", v)
		}
		browsertest.Screenshot(t, ctx, "1-scheduled")

		// The page joins by itself when the queue opens: the pre-queue.
		waitText(t, ctx, "wr-headline", "You're in the pre-queue")
		waitText(t, ctx, "wr-countdown-label", "The sale starts in")
		browsertest.WaitFor(t, ctx, "countdown to the sale", `/^(59|60):\d\d$/.test(`+text("wr-countdown-value")+`)`)
		waitContains(t, ctx, "wr-draw-text", "put in a random order by a public draw")
		waitContains(t, ctx, "wr-live", "You're in the pre-queue")
		browsertest.Screenshot(t, ctx, "2-prequeue")
		joins := api.joined()
		if len(joins) < 2 {
			t.Fatalf("%d joins; want the first (scheduled) and one at opening", len(joins))
		}
		for _, j := range joins {
			if j["return"] != "/events/summer?seat=A1" {
				t.Errorf("join with return %v; want the page's path and query", j["return"])
			}
		}

		api.set(func(s *apiState) { s.Status, s.DrawAt = "waiting_for_draw", time.Now().Add(90*time.Second) })
		waitText(t, ctx, "wr-headline", "Waiting for the draw")
		waitText(t, ctx, "wr-countdown-label", "The draw is in")
		browsertest.WaitFor(t, ctx, "draw countdown", `/^1:(2\d|30)$/.test(`+text("wr-countdown-value")+`)`)
		browsertest.Screenshot(t, ctx, "3-waiting-for-draw")

		api.set(func(s *apiState) {
			s.Status, s.DrawAt, s.Position, s.ETA, s.Low, s.High = "waiting", time.Time{}, 1234, 360, 300, 420
		})
		waitText(t, ctx, "wr-position", "1,234 people ahead of you")
		waitText(t, ctx, "wr-eta-value", "about 5–7 minutes")
		waitText(t, ctx, "wr-live", "You're in the queue. 1,234 people ahead of you. Estimated wait: about 5–7 minutes")
		announcedAt := time.Now()
		if v := browsertest.Eval[string](t, ctx, `document.getElementById("wr-bar").getAttribute("aria-valuenow")`); v != "0" {
			t.Errorf("progress %s at the first position; want 0", v)
		}
		if href := browsertest.Eval[string](t, ctx, `document.getElementById("wr-audit").getAttribute("href")`); href != "/_wr/draw/summer/0" {
			t.Errorf("the draw link goes to %q, want the draw page", href)
		}
		waitText(t, ctx, "wr-draw-text", "Everyone who arrived before the sale started was put in a random order by a public draw.")
		if browsertest.Eval[bool](t, ctx, `!document.getElementById("wr-countdown").hidden`) {
			t.Error("countdown still shown while waiting")
		}
		browsertest.Screenshot(t, ctx, "4-waiting")

		api.set(func(s *apiState) { s.Position, s.ETA, s.Low, s.High = 617, 150, 120, 200 })
		waitText(t, ctx, "wr-position", "617 people ahead of you")
		waitText(t, ctx, "wr-eta-value", "about 2–4 minutes")
		browsertest.WaitFor(t, ctx, "progress 50%", `document.getElementById("wr-bar").getAttribute("aria-valuenow") === "50"`)
		// A position change is announced at most every 30 s: the live
		// region still has the first one (checked only while that holds).
		if live := browsertest.Eval[string](t, ctx, text("wr-live")); time.Since(announcedAt) < 25*time.Second && !strings.Contains(live, "1,234") {
			t.Errorf("live region changed within 30 s of the last announcement: %q", live)
		}
		browsertest.Screenshot(t, ctx, "5-waiting-half")

		api.set(func(s *apiState) { s.Position, s.ETA, s.Low, s.High = 1, 20, 10, 30 })
		waitText(t, ctx, "wr-position", "1 person ahead of you")
		waitText(t, ctx, "wr-eta-value", "less than a minute")

		// Admitted: the pass cookie, then location.replace(redirect) to the origin.
		entries := browsertest.Eval[int](t, ctx, `history.length`)
		api.set(func(s *apiState) { s.Status, s.Redirect = "admitted", "/events/summer?seat=A1" })
		browsertest.WaitFor(t, ctx, "the origin page", `!!document.getElementById("origin")`)
		if p := browsertest.Eval[string](t, ctx, `document.getElementById("path").textContent`); p != "/events/summer?seat=A1" {
			t.Errorf("landed on %q", p)
		}
		if n := browsertest.Eval[int](t, ctx, `history.length`); n != entries {
			t.Errorf("history length %d: the waiting room should be replaced, not pushed", n)
		}
		browsertest.Screenshot(t, ctx, "6-origin")
		api.mu.Lock()
		defer api.mu.Unlock()
		for _, r := range api.returns {
			if r != "/events/summer?seat=A1" {
				t.Errorf("status poll with return %q", r)
			}
		}
	})

	t.Run("german", func(t *testing.T) {
		api := newScriptedAPI(t, pages, apiState{
			Status: "waiting", Position: 4812, Display: "exact", ETA: 400, Low: 300, High: 420, Refresh: 0.3,
			Tranche: 3, OnSaleAt: time.Now().Add(-time.Hour),
		})
		ctx := b.NewTab(t, browsertest.WithAcceptLanguage("de-DE,de;q=0.9,en;q=0.5"), browsertest.WithPhone())
		browsertest.Navigate(t, ctx, api.url("/events/summer"))
		waitText(t, ctx, "wr-headline", "Sie sind in der Warteschlange")
		waitText(t, ctx, "wr-position", "4.812 Personen vor Ihnen")
		waitText(t, ctx, "wr-eta-value", "etwa 5–7 Minuten")
		waitContains(t, ctx, "wr-draw-text", "in denselben 3 Sekunden")
		waitText(t, ctx, "wr-audit", "Auslosung prüfen")
		waitContains(t, ctx, "wr-live", "4.812 Personen vor Ihnen")
		if lang := browsertest.Eval[string](t, ctx, `document.documentElement.lang`); lang != "de" {
			t.Errorf("lang=%q", lang)
		}
		if title := browsertest.Eval[string](t, ctx, `document.title`); title != "Sie sind in der Warteschlange · Summer Tour 2027" {
			t.Errorf("title %q", title)
		}
		browsertest.Screenshot(t, ctx, "waiting-de")
	})

	// A latecomer (a tranche after the on-sale) waiting for their draw is
	// told about their own few seconds, not the pre-queue's draw.
	t.Run("latecomer's draw text", func(t *testing.T) {
		api := newScriptedAPI(t, pages, apiState{
			Status: "waiting_for_draw", Position: -1, Display: "exact", ETA: -1, Low: -1, High: -1, Refresh: 0.3,
			Tranche: 4, OnSaleAt: time.Now().Add(-time.Minute), DrawAt: time.Now().Add(3 * time.Second),
		})
		ctx := b.NewTab(t)
		browsertest.Navigate(t, ctx, api.url("/events/summer"))
		waitText(t, ctx, "wr-draw-text", "Everyone who arrives within the same 3 seconds as you is put in a random order by a public draw.")
		api.set(func(s *apiState) { s.Status, s.Position, s.ETA, s.Low, s.High = "waiting", 12, 60, 30, 90 })
		waitText(t, ctx, "wr-draw-text", "Everyone who arrived within the same 3 seconds as you was put in a random order by a public draw.")
		if strings.Contains(browsertest.Eval[string](t, ctx, `document.body.innerText`), "before the sale") {
			t.Error("a latecomer is shown the pre-queue's draw text")
		}
		if href := browsertest.Eval[string](t, ctx, `document.getElementById("wr-audit").getAttribute("href")`); href != "/_wr/draw/summer/4" {
			t.Errorf("the draw link goes to %q, want the draw page", href)
		}
		if browsertest.Eval[bool](t, ctx, `!document.getElementById("wr-invite").hidden`) {
			t.Error("the invite field shows for an event without invite lanes")
		}
	})

	t.Run("spanish approximate and hidden", func(t *testing.T) {
		api := newScriptedAPI(t, pages, apiState{
			Status: "waiting", Position: 4800, Display: "approximate", ETA: 5400, Low: 4000, High: 9000, Refresh: 0.3,
		})
		ctx := b.NewTab(t, browsertest.WithAcceptLanguage("es"))
		browsertest.Navigate(t, ctx, api.url("/events/summer"))
		waitText(t, ctx, "wr-position", "unas 4800 personas delante de ti")
		waitText(t, ctx, "wr-eta-value", "entre 1 y 3 horas")
		api.set(func(s *apiState) { s.Display, s.ETA, s.Low, s.High = "hidden", -1, -1, -1 })
		waitText(t, ctx, "wr-eta-value", "calculando…")
		browsertest.WaitFor(t, ctx, "position hidden", `document.getElementById("wr-position").hidden`)
		browsertest.Screenshot(t, ctx, "hidden-es")
	})

	t.Run("sold out", func(t *testing.T) {
		api := newScriptedAPI(t, pages, apiState{Status: "waiting", Position: 80, Display: "exact", ETA: 60, Low: 60, High: 120, Refresh: 0.3})
		ctx := b.NewTab(t, browsertest.WithPhone())
		browsertest.Navigate(t, ctx, api.url("/events/summer"))
		waitText(t, ctx, "wr-position", "80 people ahead of you")
		api.set(func(s *apiState) { s.Status = "sold_out" })
		waitText(t, ctx, "wr-headline", "Sold out")
		waitText(t, ctx, "wr-message", "Everything has been sold. Thank you for waiting.")
		waitContains(t, ctx, "wr-live", "Sold out")
		for _, id := range []string{"wr-position", "wr-bar", "wr-eta", "wr-countdown", "wr-draw"} {
			if !browsertest.Eval[bool](t, ctx, `document.getElementById("`+id+`").hidden`) {
				t.Errorf("#%s shown when sold out", id)
			}
		}
		browsertest.Screenshot(t, ctx, "sold-out")
	})

	t.Run("paused", func(t *testing.T) {
		api := newScriptedAPI(t, pages, apiState{Status: "paused", Position: 250, Display: "exact", ETA: -1, Low: -1, High: -1, Refresh: 0.3})
		ctx := b.NewTab(t, browsertest.WithPhone())
		browsertest.Navigate(t, ctx, api.url("/events/summer"))
		waitText(t, ctx, "wr-headline", "The queue is paused")
		waitContains(t, ctx, "wr-message", "you keep your place")
		waitText(t, ctx, "wr-position", "250 people ahead of you")
		waitText(t, ctx, "wr-eta-value", "estimating…")
		browsertest.Screenshot(t, ctx, "paused")
		api.set(func(s *apiState) { s.Status = "waiting" })
		waitText(t, ctx, "wr-headline", "You're in the queue")
	})

	t.Run("session ended, join again", func(t *testing.T) {
		api := newScriptedAPI(t, pages, apiState{Status: "closed", Reason: "session_ended", Position: -1, Display: "exact", ETA: -1, Low: -1, High: -1, Refresh: 0.3})
		ctx := b.NewTab(t)
		browsertest.Navigate(t, ctx, api.url("/events/summer"))
		waitText(t, ctx, "wr-headline", "Your place has expired")
		waitText(t, ctx, "wr-retry", "Join the queue again")
		browsertest.Screenshot(t, ctx, "session-ended")
		before := len(api.joined())
		api.set(func(s *apiState) { s.Status, s.Reason, s.Position = "waiting", "", 42 })
		browsertest.Eval[bool](t, ctx, `document.getElementById("wr-retry").click(), true`)
		waitText(t, ctx, "wr-position", "42 people ahead of you")
		if len(api.joined()) != before+1 {
			t.Errorf("the button joined %d times", len(api.joined())-before)
		}
	})

	t.Run("errors back off and recover", func(t *testing.T) {
		api := newScriptedAPI(t, pages, apiState{
			Status: "waiting", Position: 10, Display: "exact", ETA: 30, Low: 20, High: 40, Refresh: 0.3,
			FailStatusPolls: []int{503, 429},
		})
		ctx := b.NewTab(t)
		browsertest.Navigate(t, ctx, api.url("/events/summer"))
		waitText(t, ctx, "wr-note", "Connection problem. Retrying… You keep your place.")
		browsertest.Screenshot(t, ctx, "connection-problem")
		waitText(t, ctx, "wr-position", "10 people ahead of you")
		browsertest.WaitFor(t, ctx, "note hidden", `document.getElementById("wr-note").hidden`)
	})

	t.Run("cookies refused", func(t *testing.T) {
		api := newScriptedAPI(t, pages, apiState{Status: "waiting", Position: 5, Display: "exact", ETA: 30, Low: 20, High: 40, Refresh: 0.3, NoCookie: true})
		ctx := b.NewTab(t)
		browsertest.Navigate(t, ctx, api.url("/events/summer"))
		waitText(t, ctx, "wr-headline", "Something went wrong")
		waitContains(t, ctx, "wr-message", "allow cookies")
		if n := len(api.joined()); n != 3 {
			t.Errorf("%d joins before giving up; want 3", n)
		}
	})

	// The page moves on only to a same-site path: anything else from the
	// server falls back to the page's own path (which the pass now opens).
	for _, redirect := range []string{"//evil.example/x", "/\\evil.example/x", "https://evil.example/", "/\t/evil.example", "javascript:alert(1)"} {
		t.Run("redirect "+redirect, func(t *testing.T) {
			api := newScriptedAPI(t, pages, apiState{Status: "admitted", Redirect: redirect, Position: -1, Display: "exact", ETA: -1, Low: -1, High: -1, Refresh: 0.3})
			ctx := b.NewTab(t)
			browsertest.Navigate(t, ctx, api.url("/events/summer?from=test"))
			browsertest.WaitFor(t, ctx, "the origin page", `!!document.getElementById("origin")`)
			if loc := browsertest.Eval[string](t, ctx, `location.origin + location.pathname + location.search`); loc != api.url("/events/summer?from=test") {
				t.Errorf("navigated to %s", loc)
			}
		})
	}

	// A pass that does not stick sends the visitor back to the waiting
	// room; the page stops bouncing after two returns and leaves the link.
	t.Run("pass refused: no redirect loop", func(t *testing.T) {
		api := newScriptedAPI(t, pages, apiState{Status: "admitted", Redirect: "/events/summer", NoPass: true, Position: -1, Display: "exact", ETA: -1, Low: -1, High: -1, Refresh: 0.3})
		ctx := b.NewTab(t)
		browsertest.Navigate(t, ctx, api.url("/events/summer"))
		waitContains(t, ctx, "wr-message", "allow cookies")
		waitText(t, ctx, "wr-continue", "Continue")
		api.mu.Lock()
		loads := api.pageLoads
		api.mu.Unlock()
		if loads != 3 {
			t.Errorf("the waiting room loaded %d times; want 3 (two returns)", loads)
		}
		if href := browsertest.Eval[string](t, ctx, `document.getElementById("wr-continue").getAttribute("href")`); href != "/events/summer" {
			t.Errorf("continue link %q", href)
		}
		browsertest.Screenshot(t, ctx, "pass-refused")
	})

	t.Run("reduced motion and focus", func(t *testing.T) {
		api := newScriptedAPI(t, pages, apiState{Status: "closed", Reason: "session_ended", Position: -1, Display: "exact", ETA: -1, Low: -1, High: -1, Refresh: 0.3})
		ctx := b.NewTab(t)
		browsertest.Navigate(t, ctx, api.url("/events/summer"))
		waitText(t, ctx, "wr-retry", "Join the queue again")
		transition := `getComputedStyle(document.getElementById("wr-fill")).transitionDuration`
		if d := browsertest.Eval[string](t, ctx, transition); d != "0.8s" {
			t.Errorf("progress transition %s; want 0.8s", d)
		}
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}},
		}); err != nil {
			t.Fatal(err)
		}
		if d := browsertest.Eval[string](t, ctx, transition); d != "0s" {
			t.Errorf("progress transition %s with prefers-reduced-motion: reduce; want 0s", d)
		}
		// Keyboard focus shows a ring.
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		browsertest.WaitFor(t, ctx, "focus on the button", `document.activeElement && document.activeElement.id === "wr-retry"`)
		if o := browsertest.Eval[string](t, ctx, `getComputedStyle(document.activeElement).outlineStyle`); o != "solid" {
			t.Errorf("focused button outline %q; want a visible ring", o)
		}
		browsertest.Screenshot(t, ctx, "focus")
	})

	t.Run("busy and blocked pages", func(t *testing.T) {
		api := newScriptedAPI(t, pages, apiState{Status: "waiting", Position: 1, Refresh: 60})
		ctx := b.NewTab(t, browsertest.WithPhone(), browsertest.WithAcceptLanguage("es-ES,es;q=0.9"))
		browsertest.Navigate(t, ctx, api.url("/busy"))
		browsertest.WaitFor(t, ctx, "busy heading", `document.querySelector("h1").textContent === "Hay mucha gente ahora mismo"`)
		browsertest.Screenshot(t, ctx, "busy-es")
		browsertest.Navigate(t, ctx, api.url("/members/area"))
		browsertest.WaitFor(t, ctx, "blocked heading", `document.querySelector("h1").textContent === "Entra en la cola"`)
		if href := browsertest.Eval[string](t, ctx, `document.querySelector("a.button").getAttribute("href")`); href != "/events/summer" {
			t.Errorf("join link %q", href)
		}
		browsertest.Screenshot(t, ctx, "blocked-es")
	})

	t.Run("branding", func(t *testing.T) {
		branded, err := static.New([]static.PageConfig{{
			Event: event, Name: "Summer Tour 2027", LogoURL: "/logo.svg",
			Colors: static.Colors{Background: "#101820", Text: "#f2f2f2", Accent: "gold"},
			Texts:  map[string]map[string]string{"en": {"h_waiting": "Hang tight!"}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		api := newScriptedAPI(t, branded, apiState{Status: "waiting", Position: 300, Display: "exact", ETA: 100, Low: 90, High: 150, Refresh: 0.3})
		ctx := b.NewTab(t, browsertest.WithPhone())
		browsertest.Navigate(t, ctx, api.url("/events/summer"))
		waitText(t, ctx, "wr-headline", "Hang tight!")
		browsertest.WaitFor(t, ctx, "logo loaded", `(function(){var i=document.querySelector("img.logo");return i&&i.complete&&i.naturalWidth===160})()`)
		if bg := browsertest.Eval[string](t, ctx, `getComputedStyle(document.documentElement).backgroundColor`); bg != "rgb(16, 24, 32)" {
			t.Errorf("background %s", bg)
		}
		if fill := browsertest.Eval[string](t, ctx, `getComputedStyle(document.getElementById("wr-fill")).backgroundColor`); fill != "rgb(255, 215, 0)" {
			t.Errorf("progress fill %s; want gold", fill)
		}
		browsertest.Screenshot(t, ctx, "branded")
	})

	t.Run("named colours match the browser", func(t *testing.T) {
		ctx := b.NewTab(t)
		api := newScriptedAPI(t, pages, apiState{Status: "sold_out", Position: -1, Refresh: 60})
		browsertest.Navigate(t, ctx, api.url("/events/summer"))
		names, _ := json.Marshal(static.NamedColors())
		got := browsertest.Eval[map[string]string](t, ctx, `(function(names){
			var out = {}, el = document.createElement("i");
			document.body.appendChild(el);
			for (var n in names) {
				el.style.color = "";
				el.style.color = n;
				var m = getComputedStyle(el).color.match(/\d+/g);
				var want = names[n];
				var have = m ? (m[0] << 16 | m[1] << 8 | m[2]) : -1;
				if (have !== want) out[n] = getComputedStyle(el).color;
			}
			return out;
		})(`+string(names)+`)`)
		for name, css := range got {
			t.Errorf("%s is %s in Chromium, %06x in static", name, css, static.NamedColors()[name])
		}
	})
}
