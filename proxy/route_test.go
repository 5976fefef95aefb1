package proxy

import (
	"path"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/proxy/target"
)

func TestRouteMatch(t *testing.T) {
	cases := []struct {
		route Route
		yes   []string
		no    []string
	}{
		{Route{Prefix: "/events/summer"},
			[]string{"/events/summer", "/events/summer/", "/events/summer/seats", "/events/summer-vip"},
			[]string{"/events/summe", "/events", "/", "/x/events/summer"}},
		{Route{Prefix: "/static/"},
			[]string{"/static/", "/static/app.js", "/static/a/b", "/static"},
			[]string{"/staticx/a", "/stati"}},
		{Route{Prefix: "/"},
			[]string{"/", "/anything/at/all"},
			[]string{""}},
		{Route{Glob: "/events/*/seats"},
			[]string{"/events/summer/seats", "/events/x/seats"},
			[]string{"/events/summer/seats/1", "/events/a/b/seats", "/events/seats", "/events//seats/x"}},
		{Route{Glob: "/events/**"},
			[]string{"/events", "/events/", "/events/a", "/events/a/b/c"},
			[]string{"/event", "/eventsx/a", "/x/events/a"}},
		{Route{Glob: "/**/checkout"},
			[]string{"/checkout", "/a/checkout", "/a/b/c/checkout"},
			[]string{"/a/checkout/x", "/checkoutx", "/a/b"}},
		{Route{Glob: "/events/*-sale/**/pay?"},
			[]string{"/events/summer-sale/pay1", "/events/x-sale/a/b/payX"},
			[]string{"/events/summer-sale/pay", "/events/summer/pay1", "/events/x-sale/a/pay12"}},
		{Route{Glob: "/a/**/b/**/c"},
			[]string{"/a/b/c", "/a/x/b/y/c", "/a/b/b/c", "/a/x/y/b/z/b/c"},
			[]string{"/a/c", "/a/b/c/d", "/a/x/c"}},
		{Route{Glob: "/"},
			[]string{"/"},
			[]string{"/a"}},
		// Case-insensitive by default, as many origins are.
		{Route{Prefix: "/events/"},
			[]string{"/EVENTS/secret", "/Events/secret", "/eVeNtS/"},
			[]string{"/evnts/"}},
		{Route{Prefix: "/events/", CaseSensitive: true},
			[]string{"/events/secret"},
			[]string{"/EVENTS/secret", "/Events/secret"}},
		{Route{Prefix: "/Events/", CaseSensitive: true},
			[]string{"/Events/secret"},
			[]string{"/events/secret"}},
		// Trailing dots and encoded spaces, which Windows servers ignore,
		// and the directory itself.
		{Route{Prefix: "/events/"},
			[]string{"/events./secret", "/events.../secret", "/events%20/secret", "/events", "/events.", "/EVENTS%20."},
			[]string{"/eventsx", "/event"}},
		{Route{Glob: "/events/*/checkout"},
			[]string{"/events/a/checkout/", "/events/a./checkout.", "/EVENTS/A/CHECKOUT"},
			[]string{"/events/a/checkout/x"}},
	}
	for _, c := range cases {
		name := c.route.Prefix + c.route.Glob
		t.Run(name, func(t *testing.T) {
			m, err := compileRoute(c.route)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range c.yes {
				if !matchPath(&m, p) {
					t.Errorf("%q does not match %q", name, p)
				}
			}
			for _, p := range c.no {
				if matchPath(&m, p) {
					t.Errorf("%q matches %q", name, p)
				}
			}
		})
	}
}

// matchPath matches a normalised path as the proxy does: on its keys.
func matchPath(m *matcher, p string) bool {
	return m.match(target.Key(nil, []byte(p), true), target.Key(nil, []byte(p), false))
}

func TestCompileRouteErrors(t *testing.T) {
	for _, r := range []Route{{}, {Prefix: "/a", Glob: "/b"}, {Prefix: "a"}, {Glob: "b/*"},
		// Patterns the normaliser would never let a path match.
		{Prefix: "/a//b"}, {Prefix: "/a/../b"}, {Prefix: "/a/./b"}, {Prefix: "/%65vents/"}, {Prefix: "/a%2fb"},
		{Prefix: "/a#b"}, {Glob: "/a/**/../b"}} {
		if _, err := compileRoute(r); err == nil {
			t.Errorf("%+v: no error", r)
		}
	}
}

// FuzzGlob checks the segment matcher against path.Match on the same keys
// for patterns without "**" (where the two agree: "*" stays within a
// segment), a trailing "/" aside.
func FuzzGlob(f *testing.F) {
	f.Add("/a/*/c", "/a/b/c")
	f.Add("/a?c/*", "/abc/d")
	f.Add("/**/x", "/a/b/x")
	f.Fuzz(func(t *testing.T, pattern, p string) {
		if !strings.HasPrefix(pattern, "/") || strings.ContainsAny(pattern, "[\\") {
			return
		}
		m, err := compileRoute(Route{Glob: pattern, CaseSensitive: true})
		if err != nil {
			return
		}
		got := matchPath(&m, p)
		if strings.Contains(pattern, "**") {
			return // no reference; it must only not hang or panic
		}
		kp, kpath := string(target.Key(nil, []byte(pattern), false)), string(target.Key(nil, []byte(p), false))
		want, err := path.Match(kp, kpath)
		if err != nil {
			return
		}
		if n := len(kpath); !want && n > 1 && kpath[n-1] == '/' {
			want, _ = path.Match(kp, kpath[:n-1])
		}
		if got != want {
			t.Fatalf("glob %q on %q: got %v, path.Match %v", pattern, p, got, want)
		}
	})
}
