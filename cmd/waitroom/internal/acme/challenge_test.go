package acme

import (
	"bytes"
	"testing"

	"github.com/valyala/fasthttp"
	"golang.org/x/crypto/acme/autocert"
)

func testManager(t testing.TB) *Manager {
	m, err := New(Options{Domains: []string{"shop.example.com"}, DirectoryURL: "https://127.0.0.1:1/dir",
		Cache: autocert.DirCache(t.TempDir()), HTTP01: true})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func challengeCtx(method, host, path string) *fasthttp.RequestCtx {
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod(method)
	ctx.Request.Header.SetHost(host)
	ctx.Request.SetRequestURI(path)
	return &ctx
}

// TestChallengeScope: only a request for a configured domain under
// /.well-known/acme-challenge/ is taken; a bad token or method gets the
// JSON 404, never autocert's error text.
func TestChallengeScope(t *testing.T) {
	m := testManager(t)
	tests := []struct {
		method, host, path string
		taken              bool
	}{
		{"GET", "shop.example.com", "/.well-known/acme-challenge/abc_DEF-123", true},
		{"GET", "SHOP.example.com.:80", "/.well-known/acme-challenge/abc", true},
		{"HEAD", "shop.example.com", "/.well-known/acme-challenge/abc", true},
		{"POST", "shop.example.com", "/.well-known/acme-challenge/abc", true},
		{"GET", "shop.example.com", "/.well-known/acme-challenge/a/../b", true},
		{"GET", "shop.example.com", "/.well-known/acme-challenge/", true},
		{"GET", "evil.example.com", "/.well-known/acme-challenge/abc", false},
		{"GET", "shop.example.com", "/.well-known/other", false},
		{"GET", "shop.example.com", "/show/", false},
	}
	for _, tt := range tests {
		ctx := challengeCtx(tt.method, tt.host, tt.path)
		if got := m.Challenge(ctx); got != tt.taken {
			t.Errorf("%s %s%s: taken %v, want %v", tt.method, tt.host, tt.path, got, tt.taken)
			continue
		}
		if tt.taken && (ctx.Response.StatusCode() != 404 || !bytes.Equal(ctx.Response.Body(), notFound)) {
			t.Errorf("%s %s%s: %d %q, want the JSON 404 (no such token)", tt.method, tt.host, tt.path, ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
}

// FuzzChallenge: any Host and path; a request is taken only for the
// configured domain under the challenge prefix, and an unknown token is
// always the JSON 404.
func FuzzChallenge(f *testing.F) {
	f.Add("shop.example.com", "/.well-known/acme-challenge/abc")
	f.Add("shop.example.com:8080", "/.well-known/acme-challenge/%2e%2e/x")
	f.Add("[::1]", "/.well-known/acme-challenge/\x00")
	m := testManager(f)
	f.Fuzz(func(t *testing.T, host, path string) {
		ctx := challengeCtx("GET", host, path)
		if !m.Challenge(ctx) {
			return
		}
		if _, ok := m.challengeHost(ctx.Host()); !ok || !bytes.HasPrefix(ctx.URI().PathOriginal(), []byte(challengePrefix)) {
			t.Fatalf("took Host %q path %q", ctx.Host(), ctx.URI().PathOriginal())
		}
		if ctx.Response.StatusCode() != 404 || !bytes.Equal(ctx.Response.Body(), notFound) {
			t.Fatalf("unknown token answered %d %q", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	})
}
