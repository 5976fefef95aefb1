package proxy

import (
	"net/http"
	"strings"
	"testing"
)

func TestCookieName(t *testing.T) {
	tests := []struct {
		c          Cookies
		base, want string
	}{
		{Cookies{Secure: SecureAuto}, "wr_pass", "wr_pass_show"},
		{Cookies{Secure: SecureNever}, "wr_pass", "wr_pass_show"},
		{Cookies{Secure: SecureAlways}, "wr_pass", "__Host-wr_pass_show"},
		{Cookies{Secure: SecureAlways, Domain: "example.com"}, "wr_pass", "__Secure-wr_pass_show"},
		{Cookies{Secure: SecureAlways}, "__Host-p", "__Host-p_show"},
		{Cookies{Secure: SecureAlways, Domain: "example.com"}, "__secure-p", "__secure-p_show"},
	}
	for _, tt := range tests {
		if got := tt.c.Name(tt.base, "show"); got != tt.want {
			t.Errorf("%+v.Name(%q) = %q, want %q", tt.c, tt.base, got, tt.want)
		}
	}
}

// TestSecureCookies: with always-Secure cookies the proxy sets and reads
// exactly the __Host- name; a cookie of the plain name is not a ticket.
func TestSecureCookies(t *testing.T) {
	r := newRig(t, func(o *Options) { o.Cookies.Secure = SecureAlways })
	v := newVisitor(t, "ua")
	join := v.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`)
	if join.status != 200 {
		t.Fatalf("join: %d %s", join.status, join.body)
	}
	var ticket *http.Cookie
	for _, c := range (&http.Response{Header: join.header}).Cookies() {
		if c.Name == "__Host-wr_ticket_show" {
			ticket = c
		}
		if c.Name == "wr_ticket_show" {
			t.Errorf("a cookie without the prefix: %v", c)
		}
	}
	if ticket == nil || !ticket.Secure || ticket.Path != "/" || ticket.Domain != "" || !ticket.HttpOnly {
		t.Fatalf("ticket cookie %v in %q", ticket, join.header.Values("Set-Cookie"))
	}
	// The jar does not send a Secure cookie over plain HTTP: send it by
	// hand, under the right name and under the plain one.
	plain := newVisitor(t, "ua")
	if got := plain.do(t, "GET", r.url+"/_wr/api/status?event=show", "", "Cookie", "__Host-wr_ticket_show="+ticket.Value); got.status != 200 ||
		!strings.Contains(got.body, `"status":"prequeue"`) {
		t.Errorf("status with the __Host- ticket: %d %s", got.status, got.body)
	}
	if got := plain.do(t, "GET", r.url+"/_wr/api/status?event=show", "", "Cookie", "wr_ticket_show="+ticket.Value); got.status == 200 {
		t.Errorf("the plain name was read as the ticket: %d %s", got.status, got.body)
	}
}

// TestSecurityHeaders: every answer waitroom writes itself has nosniff and
// the Referrer-Policy; the pages have a CSP that forbids framing.
func TestSecurityHeaders(t *testing.T) {
	r := newRig(t)
	v := newVisitor(t, "ua")
	asset := r.p.opts.Pages.AssetNames()[0]
	for _, c := range []struct {
		name, method, path, body string
		page                     bool
		accept                   string
	}{
		{"room page", "GET", "/show/seats", "", true, ""},
		{"blocked page", "GET", "/checkout/x", "", true, ""},
		{"join", "POST", "/_wr/api/join", `{"event":"show"}`, false, ""},
		{"status", "GET", "/_wr/api/status?event=show", "", false, ""},
		{"room status (JSON)", "GET", "/show/seats", "", false, "application/json"},
		{"join error", "POST", "/_wr/api/join", `{"event":7}`, false, ""},
		{"unknown api", "GET", "/_wr/api/nope", "", false, ""},
		{"jwks", "GET", "/_wr/jwks.json", "", false, ""},
		{"asset", "GET", "/_wr/static/" + asset, "", false, ""},
		{"unknown asset", "GET", "/_wr/static/nope.js", "", false, ""},
		{"auth", "GET", "/_wr/auth", "", false, ""},
		{"draw audit", "GET", "/_wr/api/draws/show/0", "", false, ""},
	} {
		headers := []string{"X-Original-URI", "/show/x"}
		if c.accept != "" {
			headers = append(headers, "Accept", c.accept)
		}
		got := v.do(t, c.method, r.url+c.path, c.body, headers...)
		if got.header.Get("X-Content-Type-Options") != "nosniff" || got.header.Get("Referrer-Policy") != ReferrerPolicy {
			t.Errorf("%s: %d without the headers: %v", c.name, got.status, got.header)
		}
		if c.page && !strings.Contains(got.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("%s: CSP %q", c.name, got.header.Get("Content-Security-Policy"))
		}
	}
}
