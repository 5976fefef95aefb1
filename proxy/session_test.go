package proxy

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/admission"
)

type sessionJSON struct {
	Event         string    `json:"event"`
	Active        bool      `json:"active"`
	ExpiresAt     time.Time `json:"expires_at"`
	ExpiresIn     int64     `json:"expires_in"`
	Renews        bool      `json:"renews"`
	SessionEndsAt time.Time `json:"session_ends_at"`
	Done          bool      `json:"done"`
	Error         string    `json:"error"`
	Message       string    `json:"message"`
}

func getSession(t *testing.T, r *rig, v *visitor, query string) (response, sessionJSON) {
	t.Helper()
	resp := v.do(t, "GET", r.url+"/_wr/api/session"+query, "")
	var s sessionJSON
	d := json.NewDecoder(strings.NewReader(resp.body))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		t.Fatalf("session %s: %d %q: %v", query, resp.status, resp.body, err)
	}
	if resp.header.Get("Cache-Control") != "no-store" || !strings.HasPrefix(resp.header.Get("Content-Type"), "application/json") {
		t.Fatalf("session %s: headers %v", query, resp.header)
	}
	return resp, s
}

func TestSessionEndpoint(t *testing.T) {
	r := newRig(t)
	r.origin.handler = func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/show/paid" {
			ctx.Response.Header.Set("X-Waitroom-Complete", "1")
		}
		ctx.WriteString("origin:" + string(ctx.Path()))
	}
	stranger := newVisitor(t, "ua-x")
	if resp, s := getSession(t, r, stranger, "?event=show"); resp.status != http.StatusUnauthorized || s.Error != "no_pass" || s.Message == "" {
		t.Fatalf("without a pass: %d %+v", resp.status, s)
	}
	for _, q := range []string{"?event=nope", "", "?event=", "?event=%3Cscript%3E"} {
		if resp, s := getSession(t, r, stranger, q); resp.status != http.StatusNotFound || s.Error != "unknown_event" {
			t.Fatalf("session %q: %d %+v", q, resp.status, s)
		}
	}
	if resp := stranger.do(t, "POST", r.url+"/_wr/api/session?event=show", `{}`); resp.status != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", resp.status)
	}

	vs := r.admitAll(t, "ua-a", "ua-b", "ua-c")
	a, b, c := vs[0], vs[1], vs[2]
	pa := r.pass(t, a)
	resp, s := getSession(t, r, a, "?event=show")
	want := sessionJSON{Event: "show", Active: true, ExpiresAt: pa.ExpiresAt, ExpiresIn: int64(pa.ExpiresAt.Sub(r.clk.Now()) / time.Second),
		Renews: true, SessionEndsAt: pa.AdmittedAt.Add(admission.DefaultMaxSessionFactor * admission.DefaultSessionDuration)}
	if resp.status != 200 || s != want {
		t.Fatalf("an admitted visitor's session: %d %+v, want %+v", resp.status, s, want)
	}
	// Asking is not browsing: it renews nothing, even when due.
	r.clk.Set(pa.ExpiresAt.Add(-time.Minute))
	resp, s = getSession(t, r, a, "?event=show")
	if renewedPass(resp) != "" || s.ExpiresIn != 60 || !s.Renews {
		t.Fatalf("a due session: cookie %q, %+v", renewedPass(resp), s)
	}
	// Browsing does; the session says so.
	a.do(t, "GET", r.url+"/show/x", "")
	if _, s = getSession(t, r, a, "?event=show"); s.ExpiresIn != int64(admission.DefaultSessionDuration/time.Second) {
		t.Fatalf("after browsing: %+v", s)
	}
	// The other event knows no pass of theirs.
	if resp, s := getSession(t, r, a, "?event=other"); resp.status != http.StatusUnauthorized || s.Error != "no_pass" {
		t.Fatalf("another event: %d %+v", resp.status, s)
	}
	// Another browser with the same cookie is not the same device.
	thief := newVisitor(t, "ua-thief")
	if resp := thief.do(t, "GET", r.url+"/_wr/api/session?event=show", "", "Cookie", "wr_pass_show="+a.cookie(r.url, "wr_pass_show")); resp.status != http.StatusUnauthorized {
		t.Fatalf("a pass from another device: %d %s", resp.status, resp.body)
	}

	// Done at the origin: still active for the grace, but it will not renew.
	b.do(t, "GET", r.url+"/show/paid", "")
	if _, s := getSession(t, r, b, "?event=show"); !s.Active || s.Renews || !s.Done {
		t.Fatalf("a completed visitor's session: %+v", s)
	}
	// Revoked: gone.
	base := startAdmin(t, r)
	pc := r.pass(t, c)
	if code, out := adminDo(t, "POST", base+"/admin/v1/events/show/revoke", adminToken, `{"pass_id":"`+pc.ID+`"}`); code != 200 {
		t.Fatalf("revoke: %d %v", code, out)
	}
	if resp, s := getSession(t, r, c, "?event=show"); resp.status != http.StatusUnauthorized || s.Error != "no_pass" {
		t.Fatalf("a revoked visitor's session: %d %+v", resp.status, s)
	}
}

func TestSessionScript(t *testing.T) {
	r := newRig(t)
	v := newVisitor(t, "ua-a")
	resp := v.do(t, "GET", r.url+"/_wr/session.js?event=show", "")
	if resp.status != 200 || resp.header.Get("Content-Type") != "text/javascript; charset=utf-8" ||
		resp.header.Get("Vary") != "Accept-Language" || resp.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("session.js: %d %v", resp.status, resp.header)
	}
	for _, want := range []string{`"event":"show"`, `"prefix":"/_wr"`, `"lang":"en"`, "Keep browsing to stay in", "/api/session?event="} {
		if !strings.Contains(resp.body, want) {
			t.Errorf("session.js lacks %q", want)
		}
	}
	if strings.Contains(resp.body, "\n//") {
		t.Error("session.js carries its comments")
	}
	de := v.do(t, "GET", r.url+"/_wr/session.js?event=show", "", "Accept-Language", "de-DE,de;q=0.9")
	if !strings.Contains(de.body, `"lang":"de"`) || !strings.Contains(de.body, "Surfen Sie weiter") {
		t.Errorf("German session.js: %s", de.body)
	}
	for _, u := range []string{"/_wr/session.js?event=nope", "/_wr/session.js", "/_wr/session.js?event=%22%3E%3Cscript%3E"} {
		if resp := v.do(t, "GET", r.url+u, ""); resp.status != http.StatusNotFound || !strings.Contains(resp.body, `"unknown_event"`) {
			t.Errorf("%s: %d %s", u, resp.status, resp.body)
		}
	}
	if resp := v.do(t, "POST", r.url+"/_wr/session.js?event=show", "{}"); resp.status != http.StatusMethodNotAllowed {
		t.Errorf("POST session.js: %d", resp.status)
	}
	// The room page does not carry the banner's texts.
	room := v.do(t, "GET", r.url+"/show/", "")
	if strings.Contains(room.body, "session_ending") {
		t.Error("the room page carries the session banner's texts")
	}
}
