package proxy

import (
	"path"
	"strings"
	"testing"
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
			[]string{"/static/", "/static/app.js", "/static/a/b"},
			[]string{"/static", "/staticx/a"}},
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
	}
	for _, c := range cases {
		name := c.route.Prefix + c.route.Glob
		t.Run(name, func(t *testing.T) {
			m, err := compileRoute(c.route)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range c.yes {
				if !m.match([]byte(p)) {
					t.Errorf("%q does not match %q", name, p)
				}
			}
			for _, p := range c.no {
				if m.match([]byte(p)) {
					t.Errorf("%q matches %q", name, p)
				}
			}
		})
	}
}

func TestCompileRouteErrors(t *testing.T) {
	for _, r := range []Route{{}, {Prefix: "/a", Glob: "/b"}, {Prefix: "a"}, {Glob: "b/*"}} {
		if _, err := compileRoute(r); err == nil {
			t.Errorf("%+v: no error", r)
		}
	}
}

// FuzzGlob checks the segment matcher against path.Match for patterns
// without "**" (where the two agree: "*" stays within a segment).
func FuzzGlob(f *testing.F) {
	f.Add("/a/*/c", "/a/b/c")
	f.Add("/a?c/*", "/abc/d")
	f.Add("/**/x", "/a/b/x")
	f.Fuzz(func(t *testing.T, pattern, p string) {
		if !strings.HasPrefix(pattern, "/") || strings.ContainsAny(pattern, "[\\") {
			return
		}
		m, err := compileRoute(Route{Glob: pattern})
		if err != nil {
			return
		}
		got := m.match([]byte(p))
		if strings.Contains(pattern, "**") {
			return // no reference; it must only not hang or panic
		}
		want, err := path.Match(pattern, p)
		if err != nil {
			return
		}
		if got != want {
			t.Fatalf("glob %q on %q: got %v, path.Match %v", pattern, p, got, want)
		}
	})
}
