package proxy

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/admission"
)

// renewedPass returns the pass cookie a response set ("" for none).
func renewedPass(resp response) string {
	for _, c := range resp.header.Values("Set-Cookie") {
		if v, ok := strings.CutPrefix(c, "wr_pass_show="); ok {
			v, _, _ = strings.Cut(v, ";")
			return v
		}
	}
	return ""
}

func TestPassRenewal(t *testing.T) {
	r := newRig(t)
	r.origin.handler = func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Path()) {
		case "/show/cached":
			ctx.Response.Header.Set("Cache-Control", "public, max-age=60")
		case "/show/private":
			ctx.Response.Header.Set("Cache-Control", "Private, max-age=60")
		case "/show/paid":
			ctx.Response.Header.Set("X-Waitroom-Complete", "1")
		}
		ctx.SetContentType("text/plain")
		ctx.WriteString("origin:" + string(ctx.Path()))
	}
	vs := r.admitAll(t, "ua-a", "ua-b", "ua-c")
	a, b, c := vs[0], vs[1], vs[2]
	pa := r.pass(t, a)
	session, maxSession := admission.DefaultSessionDuration, admission.DefaultMaxSessionFactor*admission.DefaultSessionDuration
	if pa.AdmittedAt.IsZero() {
		t.Fatal("a pass from the room carries no session start")
	}
	renewed := func() float64 {
		return counterValue(t, r.reg, "waitroom_passes_renewed_total", map[string]string{"event": "show"})
	}

	// Early on, nothing is renewed.
	r.clk.Set(pa.ExpiresAt.Add(-session/2 - time.Second))
	if resp := a.do(t, "GET", r.url+"/show/x", ""); resp.body != "origin:/show/x" || renewedPass(resp) != "" {
		t.Fatalf("a request with most of the session left: %d %q, cookie %q", resp.status, resp.body, renewedPass(resp))
	}

	// Within half a session of the end, the next request renews it.
	r.clk.Set(pa.ExpiresAt.Add(-session / 2))
	old := a.cookie(r.url, "wr_pass_show")
	resp := a.do(t, "GET", r.url+"/show/x", "")
	tok := renewedPass(resp)
	if resp.body != "origin:/show/x" || tok == "" || tok == old {
		t.Fatalf("a due request: %d %q, cookie %q", resp.status, resp.body, tok)
	}
	if cc := resp.header.Get("Cache-Control"); cc != "private" {
		t.Fatalf("a renewing response without Cache-Control got %q, want private", cc)
	}
	np := r.pass(t, a)
	if np.ID != pa.ID || np.Visitor != pa.Visitor || np.Binding != pa.Binding || !np.AdmittedAt.Equal(pa.AdmittedAt) ||
		!np.ExpiresAt.Equal(r.clk.Now().Add(session)) {
		t.Fatalf("renewed pass %+v from %+v", np, pa)
	}
	if renewed() != 1 {
		t.Fatalf("renewals counted: %v", renewed())
	}
	// A request still carrying the old pass gets the same new one, no second mint.
	again := newVisitor(t, "ua-a")
	resp = again.do(t, "GET", r.url+"/show/x", "", "Cookie", "wr_pass_show="+old)
	if renewedPass(resp) != tok || renewed() != 1 {
		t.Fatalf("the old pass again: cookie %q, renewals %v", renewedPass(resp), renewed())
	}
	// An app's old pass in a header gets the renewal back in
	// X-Waitroom-Pass, but never on a publicly cacheable answer.
	for _, h := range [][]string{{"X-Waitroom-Pass", old}, {"Authorization", "Bearer " + old}} {
		resp := newVisitor(t, "ua-a").do(t, "GET", r.url+"/show/x", "", h...)
		if got := resp.header.Get("X-Waitroom-Pass"); resp.body != "origin:/show/x" || got != tok {
			t.Fatalf("the old pass in %s: %q, X-Waitroom-Pass %q, want the renewal", h[0], resp.body, got)
		}
		resp = newVisitor(t, "ua-a").do(t, "GET", r.url+"/show/cached", "", h...)
		if got := resp.header.Get("X-Waitroom-Pass"); resp.body != "origin:/show/cached" || got != "" || renewedPass(resp) != "" {
			t.Fatalf("the old pass in %s on a public answer: %q, X-Waitroom-Pass %q, cookie %q", h[0], resp.body, got, renewedPass(resp))
		}
	}

	// A publicly cacheable response never carries the cookie; the next
	// private one does.
	pb := r.pass(t, b)
	r.clk.Set(pb.ExpiresAt.Add(-time.Minute))
	if resp := b.do(t, "GET", r.url+"/show/cached", ""); renewedPass(resp) != "" || resp.header.Get("Cache-Control") != "public, max-age=60" {
		t.Fatalf("a public response: cookie %q, Cache-Control %q", renewedPass(resp), resp.header.Get("Cache-Control"))
	}
	if resp := b.do(t, "GET", r.url+"/show/private", ""); renewedPass(resp) == "" {
		t.Fatal("a private response did not carry the renewal")
	}

	// Completion wins: no renewal on the completing response or after it.
	if resp := c.do(t, "GET", r.url+"/show/paid", ""); renewedPass(resp) != "" {
		t.Fatal("the completing response renewed the pass")
	}
	if resp := c.do(t, "GET", r.url+"/show/x", ""); renewedPass(resp) != "" {
		t.Fatal("a completed visitor's pass was renewed")
	}

	// It slides until the session's maximum, then stops.
	end := pa.AdmittedAt.Add(maxSession)
	for i := 0; ; i++ {
		cur := r.pass(t, a)
		r.clk.Set(cur.ExpiresAt.Add(-session/2 + time.Second))
		resp := a.do(t, "GET", r.url+"/show/x", "")
		if renewedPass(resp) == "" {
			if !cur.ExpiresAt.Equal(end) {
				t.Fatalf("renewal stopped at %v, before the session's end %v", cur.ExpiresAt, end)
			}
			break
		}
		if i > 10 {
			t.Fatal("renewal went on past the session's end")
		}
	}
	if got := r.pass(t, a).ExpiresAt; !got.Equal(end) {
		t.Fatalf("last pass expires at %v, want %v", got, end)
	}
	r.clk.Set(end)
	if passes(t, r, a) {
		t.Fatal("a pass works after the session's maximum")
	}
}

func TestPassRenewalAuthRequest(t *testing.T) {
	r := newRig(t)
	v := r.admitAll(t, "ua-a")[0]
	p := r.pass(t, v)
	auth := func() response {
		return v.do(t, "GET", r.url+"/_wr/auth", "", "X-Original-URI", "/show/x", "X-Original-Method", "GET")
	}
	if resp := auth(); resp.status != http.StatusNoContent || renewedPass(resp) != "" {
		t.Fatalf("auth early in the session: %d, cookie %q", resp.status, renewedPass(resp))
	}
	r.clk.Set(p.ExpiresAt.Add(-time.Minute))
	resp := auth()
	if resp.status != http.StatusNoContent || renewedPass(resp) == "" {
		t.Fatalf("auth of a due pass: %d, cookie %q", resp.status, renewedPass(resp))
	}
	if np := r.pass(t, v); np.ID != p.ID || !np.ExpiresAt.After(p.ExpiresAt) {
		t.Fatalf("renewed pass %+v from %+v", np, p)
	}
}
