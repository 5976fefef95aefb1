package proxy

import (
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/testkit/nginxtest"
	"github.com/waitroom/waitroom/proxy/httpguard"
)

// TestNginxAuthRequest runs a real nginx with the shipped
// configs/nginx-auth-request.conf in front of waitroom (no origins of its
// own) and the site: nginx asks /_wr/auth for every request.
func TestNginxAuthRequest(t *testing.T) {
	r := newRig(t, authRequestMode)
	site := startNginxAuthRequest(t, r).URL()
	v, p := frontFlow(t, r, site, "nginx")
	// The auth endpoint itself is internal.
	if got := v.do(t, "GET", site+"/_wr/auth", "", "X-Original-URI", "/about"); got.status != 404 {
		t.Fatalf("/_wr/auth from outside: %d", got.status)
	}

	// Browsing late in the session: nginx passes the renewed pass on with
	// the site's answer.
	r.clk.Set(p.ExpiresAt.Add(-time.Minute))
	got := v.do(t, "GET", site+"/show/seats", "")
	np, err := r.keys.VerifyPass(v.cookie(site, "wr_pass_show"), "show", v.bindingFor(t), r.clk.Now())
	if got.body != "origin:/show/seats" || renewedPass(got) == "" || err != nil || np.ID != p.ID || !np.ExpiresAt.After(p.ExpiresAt) {
		t.Fatalf("a due pass through nginx: %d %q, cookie %q, pass %+v (%v)", got.status, got.body, renewedPass(got), np, err)
	}
	if got := v.do(t, "GET", site+"/show/seats", ""); renewedPass(got) != "" {
		t.Fatal("nginx sent a renewed pass on a response that renewed nothing")
	}
}

// TestCaddyForwardAuth is the visitor's whole way through a real Caddy
// running the shipped configs/caddy-forward-auth.Caddyfile: the page at a
// gated path without the site seeing it, join and status, admission, the
// site with the visitor's headers. (A pass is renewed through the page's
// session endpoint under /_wr/, which Caddy sends to waitroom; the
// forward_auth answer's cookie is not passed on.)
func TestCaddyForwardAuth(t *testing.T) {
	r := newRig(t, authRequestMode)
	frontFlow(t, r, startCaddyForwardAuth(t, r).URL(), "caddy")
}

// frontFlow walks a visitor through a front proxy (nginx auth_request,
// Caddy forward_auth) at site: the waiting-room page for a gated path
// without a pass (the site never sees it), pass paths to the site, a
// blocked path refused, join and status, admission, then the gated path
// at the site with the visitor's headers and a forged one removed. It
// returns the visitor and their pass.
func frontFlow(t *testing.T, r *rig, site, front string) (*visitor, admission.Pass) {
	t.Helper()
	v := newVisitor(t, "Mozilla/5.0 "+front)

	// No pass: waitroom's page, and the site never sees the request.
	page := v.do(t, "GET", site+"/show/seats", "")
	if page.status != 200 || !strings.Contains(page.body, "The Show") {
		t.Fatalf("gated page through %s: %d %.200s", front, page.status, page.body)
	}
	if r.origin.count() != 0 {
		t.Fatal("the site saw a request without a pass")
	}
	// Paths that need no pass go to the site.
	if got := v.do(t, "GET", site+"/about", ""); got.body != "origin:/about" {
		t.Fatalf("pass path: %d %s", got.status, got.body)
	}
	if s := r.origin.last(t); s.visitor != "" {
		t.Fatalf("visitor header on a pass path: %+v", s)
	}
	// Blocked without a pass: waitroom's 403.
	if got := v.do(t, "GET", site+"/checkout/1", ""); got.status != 403 {
		t.Fatalf("blocked path: %d", got.status)
	}

	// Join and get admitted through the front proxy.
	st := decodeStatus(t, v.do(t, "POST", site+"/_wr/api/join", `{"event":"show","return":"/show/seats"}`))
	if st.Status != "prequeue" {
		t.Fatalf("join through %s: %+v", front, st)
	}
	for d := 11; d < 20 && st.Status != "admitted"; d++ {
		r.tick(t, secs(d))
		st = decodeStatus(t, v.do(t, "GET", site+"/_wr/api/status?event=show&return=/show/seats", ""))
	}
	if st.Status != "admitted" {
		t.Fatalf("never admitted: %+v", st)
	}
	got := v.do(t, "GET", site+"/show/seats", "", "X-Waitroom-Visitor", "forged")
	if got.body != "origin:/show/seats" {
		t.Fatalf("with a pass through %s: %d %.200s", front, got.status, got.body)
	}
	p, err := r.keys.VerifyPass(v.cookie(site, "wr_pass_show"), "show", v.bindingFor(t), r.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if s := r.origin.last(t); s.visitor != p.Visitor.String() || s.event != "show" {
		t.Fatalf("the site saw visitor %q event %q, want %s show", s.visitor, s.event, p.Visitor)
	}
	// A client's forged header never reaches the site on a pass path
	// either: the front proxy removes it.
	v.do(t, "GET", site+"/about", "", "X-Waitroom-Visitor", "forged")
	if s := r.origin.last(t); s.visitor != "" {
		t.Fatalf("a forged visitor header reached the site: %q", s.visitor)
	}

	return v, p
}

// authRequestMode is the rig without origins (nginx or Caddy serves the
// site) and trusting the front proxy on loopback.
func authRequestMode(o *Options) {
	o.Origins = nil
	o.Trusted = httpguard.NewTrusted([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")})
}

// startNginxAuthRequest runs nginx with the shipped
// configs/nginx-auth-request.conf, pointed at the rig's waitroom and its
// origin as the site.
func startNginxAuthRequest(t *testing.T, r *rig) *nginxtest.Server {
	t.Helper()
	conf, err := os.ReadFile("../configs/nginx-auth-request.conf")
	if err != nil {
		t.Fatal(err)
	}
	http := string(conf)
	for old, new := range map[string]string{
		"server 127.0.0.1:8080;": "server " + strings.TrimPrefix(r.url, "http://") + ";",
		"server 127.0.0.1:9000;": "server " + r.origin.addr + ";",
		"listen 80;":             "listen 127.0.0.1:{{PORT}};",
	} {
		if !strings.Contains(http, old) {
			t.Fatalf("configs/nginx-auth-request.conf no longer has %q", old)
		}
		http = strings.Replace(http, old, new, 1)
	}
	return nginxtest.Start(t, nginxtest.Options{HTTP: http})
}
