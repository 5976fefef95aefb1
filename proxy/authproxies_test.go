package proxy

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestAuthTraefikForwardAuth replays the request Traefik's forwardAuth
// sends: always GET to the address, the original request's headers
// (Cookie, User-Agent, Accept) copied, and X-Forwarded-Method, -Proto,
// -Host, -Uri and -For set. Traefik lets the request through on any 2xx
// and otherwise hands waitroom's answer to the visitor as it is, so a
// page navigation that must queue gets the waiting-room page (with 401),
// and a script the JSON error.
func TestAuthTraefikForwardAuth(t *testing.T) {
	r := newRig(t)
	v := r.admit(t, "Mozilla/5.0 traefik")
	pass := "wr_pass_show=" + v.cookie(r.url, "wr_pass_show")
	anon := newVisitor(t, "Mozilla/5.0 traefik")
	traefik := func(method, uri, accept, cookie string) []string {
		h := []string{"X-Forwarded-Method", method, "X-Forwarded-Proto", "https", "X-Forwarded-Host", "shop.example",
			"X-Forwarded-Uri", uri, "X-Forwarded-For", "203.0.113.7", "Accept", accept}
		if cookie != "" {
			h = append(h, "Cookie", cookie)
		}
		return h
	}
	const html = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	for _, c := range []struct {
		name, method, uri, accept, cookie string
		status                            int
		page                              bool
	}{
		{"pass path", "GET", "/static/a.css", html, "", 204, false},
		{"gated page without a pass", "GET", "/show/seats?x=1", html, "", 401, true},
		{"gated script without a pass", "GET", "/show/seats", "application/json", "", 401, false},
		{"gated form post without a pass", "POST", "/show/seats", html, "", 401, false},
		{"gated with a pass", "GET", "/show/seats", html, pass, 204, false},
		{"gated post with a pass", "POST", "/show/seats", html, pass, 204, false},
		{"blocked without a pass", "GET", "/checkout/1", html, "", 403, false},
		{"not normalised", "GET", "/static/../show/seats", html, "", 401, false},
		{"reserved prefix", "GET", "/_wr/api/status", html, "", 403, false},
		{"trace", "TRACE", "/static/a.css", html, "", 403, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := anon.do(t, "GET", r.url+"/_wr/auth", "", traefik(c.method, c.uri, c.accept, c.cookie)...)
			if got.status != c.status {
				t.Fatalf("got %d %.200s, want %d", got.status, got.body, c.status)
			}
			if isPage := strings.Contains(got.body, "The Show") && strings.HasPrefix(got.header.Get("Content-Type"), "text/html"); isPage != c.page {
				t.Fatalf("waiting-room page %v, want %v: %s %.200s", isPage, c.page, got.header.Get("Content-Type"), got.body)
			}
			if c.page && got.header.Get("Content-Security-Policy") == "" {
				t.Fatal("the page came without its Content-Security-Policy")
			}
			if c.status == 204 && c.cookie != "" && got.header.Get("X-Waitroom-Visitor") == "" {
				t.Fatal("allowed with a pass but without X-Waitroom-Visitor")
			}
		})
	}
	if r.origin.count() != 0 {
		t.Fatalf("the auth endpoint forwarded %d requests", r.origin.count())
	}
}

// TestAuthEnvoyExtAuthz replays Envoy's ext_authz HTTP service: with
// path_prefix /_wr/auth the check request has the original method and
// the original path appended to the prefix, Content-Length 0, and the
// headers allowed_headers lets through (Cookie, User-Agent, Accept here);
// or, without path_prefix, the original path in X-Envoy-Original-Path
// (headers_to_add: %REQ(:PATH)%). Envoy allows only a 200 and hands any
// other answer to the visitor.
func TestAuthEnvoyExtAuthz(t *testing.T) {
	r := newRig(t)
	v := r.admit(t, "Mozilla/5.0 envoy")
	pass := "wr_pass_show=" + v.cookie(r.url, "wr_pass_show")
	anon := newVisitor(t, "Mozilla/5.0 envoy")
	const html = "text/html,*/*;q=0.8"
	type shape struct {
		name, method, target string
		header               []string
		status               int
		page                 bool
	}
	var cases []shape
	for _, form := range []string{"prefix", "header"} {
		check := func(name, method, uri, accept, cookie string, status int, page bool, extra ...string) {
			target, h := r.url+"/_wr/auth"+uri, []string{"Accept", accept, "Content-Length", "0"}
			if form == "header" {
				target, h = r.url+"/_wr/auth", append(h, "X-Envoy-Original-Path", uri)
			}
			if cookie != "" {
				h = append(h, "Cookie", cookie)
			}
			cases = append(cases, shape{form + "/" + name, method, target, append(h, extra...), status, page})
		}
		check("pass path", "GET", "/static/a.css", html, "", 200, false)
		check("pass path with a query", "GET", "/static/a.css?v=1", html, "", 200, false)
		check("gated page without a pass", "GET", "/show/seats", html, "", 401, true)
		check("gated script without a pass", "GET", "/show/seats", "application/json", "", 401, false)
		check("gated post without a pass", "POST", "/show/seats", html, "", 401, false)
		check("gated with a pass", "GET", "/show/seats", html, pass, 200, false)
		check("gated delete with a pass", "DELETE", "/show/seats/1", html, pass, 200, false)
		check("blocked without a pass", "GET", "/checkout/1", html, "", 403, false)
		check("not normalised", "GET", "/static/../show/seats", html, "", 401, false)
		check("double slash", "GET", "//show/seats", html, "", 401, false)
		check("case", "GET", "/SHOW/seats", html, "", 401, true) // routes ignore case
		if form == "prefix" {
			// Refused before routing, as any target with %2F.
			check("encoded slash", "GET", "/static%2F..%2Fshow", html, "", 400, false)
		} else {
			check("encoded slash", "GET", "/static%2F..%2Fshow", html, "", 401, false)
		}
		check("reserved prefix", "GET", "/_wr/api/status", html, "", 403, false)
		check("trace", "TRACE", "/static/a.css", html, "", 403, false)
		// A client's own header must agree with what Envoy sent.
		check("client adds an original", "GET", "/static/a.css", html, "", 401, false, "X-Original-URI", "/show/seats")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := anon.do(t, c.method, c.target, "", c.header...)
			if got.status != c.status {
				t.Fatalf("got %d %.200s, want %d", got.status, got.body, c.status)
			}
			if isPage := strings.Contains(got.body, "The Show") && strings.HasPrefix(got.header.Get("Content-Type"), "text/html"); isPage != c.page {
				t.Fatalf("waiting-room page %v, want %v: %.200s", isPage, c.page, got.body)
			}
			if c.status == 200 && strings.Contains(strings.Join(c.header, " "), "wr_pass") && got.header.Get("X-Waitroom-Visitor") == "" {
				t.Fatal("allowed with a pass but without X-Waitroom-Visitor")
			}
		})
	}
	// The prefix form takes the request-target's own bytes: a target
	// whose prefix is spelt otherwise is not the endpoint.
	if got := anon.do(t, "GET", r.url+"/_WR/auth/static/a.css", ""); got.status == 200 {
		t.Fatal("a differently spelt prefix answered as the auth endpoint")
	}
	if r.origin.count() != 0 {
		t.Fatalf("the auth endpoint forwarded %d requests", r.origin.count())
	}
}

// The shipped Traefik and Envoy configurations make the requests the two
// tests above replay: the endpoint's path, the headers that carry the
// cookies and the original request, and what comes back.
func TestShippedForwardAuthConfigs(t *testing.T) {
	load := func(name string) map[string]any {
		b, err := os.ReadFile("../configs/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return m
	}
	get := func(v any, path ...any) any {
		for _, k := range path {
			switch k := k.(type) {
			case string:
				m, _ := v.(map[string]any)
				v = m[k]
			case int:
				l, _ := v.([]any)
				if k >= len(l) {
					return nil
				}
				v = l[k]
			}
		}
		return v
	}
	patterns := func(v any) []string {
		var out []string
		l, _ := v.([]any)
		for _, p := range l {
			if s, ok := get(p, "exact").(string); ok {
				out = append(out, s)
			}
		}
		return out
	}

	tr := load("traefik-forward-auth.yaml")
	fa := get(tr, "http", "middlewares", "waitroom", "forwardAuth")
	if a, _ := get(fa, "address").(string); !strings.HasSuffix(a, "/_wr/auth") {
		t.Errorf("traefik: forwardAuth address %q is not the auth endpoint", a)
	}
	if get(fa, "trustForwardHeader") != false {
		t.Error("traefik: trustForwardHeader must be false")
	}
	if hs := fmt.Sprint(get(fa, "authResponseHeaders")); !strings.Contains(hs, "X-Waitroom-Visitor") || !strings.Contains(hs, "X-Waitroom-Event") {
		t.Errorf("traefik: authResponseHeaders %s", hs)
	}
	if r, _ := get(tr, "http", "routers", "waitroom-own", "rule").(string); !strings.Contains(r, "PathPrefix(`/_wr/`)") {
		t.Errorf("traefik: /_wr/ does not go to waitroom: %q", r)
	}

	en := load("envoy-ext-authz.yaml")
	hcm := get(en, "static_resources", "listeners", 0, "filter_chains", 0, "filters", 0, "typed_config")
	ea := get(hcm, "http_filters", 0, "typed_config")
	hs := get(ea, "http_service")
	if p := get(hs, "path_prefix"); p != "/_wr/auth" {
		t.Errorf("envoy: path_prefix %v, want /_wr/auth", p)
	}
	if get(ea, "failure_mode_allow") != false {
		t.Error("envoy: failure_mode_allow must be false")
	}
	allowed := patterns(get(hs, "authorization_request", "allowed_headers", "patterns"))
	for _, h := range []string{"cookie", "user-agent", "accept"} {
		if !slices.Contains(allowed, h) {
			t.Errorf("envoy: the check request lacks %s (allowed_headers %v)", h, allowed)
		}
	}
	up := patterns(get(hs, "authorization_response", "allowed_upstream_headers", "patterns"))
	if !slices.Contains(up, "x-waitroom-visitor") || !slices.Contains(up, "x-waitroom-event") {
		t.Errorf("envoy: allowed_upstream_headers %v", up)
	}
	own := get(hcm, "route_config", "virtual_hosts", 0, "routes", 0)
	if get(own, "match", "prefix") != "/_wr/" || get(own, "typed_per_filter_config", "envoy.filters.http.ext_authz", "disabled") != true {
		t.Errorf("envoy: the first route is not /_wr/ with ext_authz off: %v", own)
	}
}
