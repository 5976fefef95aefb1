package proxy

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/proxy/httpguard"
)

// prefixSet is an IPSet over a few prefixes.
type prefixSet []netip.Prefix

func (s prefixSet) Contains(a netip.Addr) bool {
	for _, p := range s {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// withCrawler allowlists "googlebot" from 66.249.64.0/27 and 2001:4860:4801:10::/64,
// and trusts loopback's X-Forwarded-For, so that tests can speak from
// any address.
func withCrawler() rigOption {
	return func(o *Options) {
		o.Trusted = httpguard.NewTrusted([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")})
		o.Crawlers = []Crawler{{Name: "googlebot", UserAgents: []string{"Googlebot"},
			Ranges: prefixSet{netip.MustParsePrefix("66.249.64.0/27"), netip.MustParsePrefix("2001:4860:4801:10::/64")}}}
	}
}

const googlebotUA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

func TestCrawlerAllowlist(t *testing.T) {
	r := newRig(t, withCrawler())
	for _, c := range []struct {
		name, ua, from, path string
		through              bool
	}{
		{"crawler in its ranges", googlebotUA, "66.249.64.5", "/show/seats", true},
		{"crawler over IPv6", googlebotUA, "2001:4860:4801:10::1", "/show/seats", true},
		{"user agent case ignored", strings.ToLower(googlebotUA), "66.249.64.30", "/show/seats", true},
		{"spoofed user agent from outside the ranges", googlebotUA, "203.0.113.9", "/show/seats", false},
		{"just outside the /27", googlebotUA, "66.249.64.32", "/show/seats", false},
		{"a browser inside the ranges", "Mozilla/5.0 Firefox/140.0", "66.249.64.5", "/show/seats", false},
		{"no user agent", "", "66.249.64.5", "/show/seats", false},
		{"block routes stay blocked", googlebotUA, "66.249.64.5", "/checkout/pay", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := r.origin.count()
			v := newVisitor(t, c.ua)
			got := v.do(t, "GET", r.url+c.path, "", "X-Forwarded-For", c.from)
			reached := r.origin.count() > before
			if reached != c.through {
				t.Fatalf("reached the origin: %v, want %v (%d %.120s)", reached, c.through, got.status, got.body)
			}
			if c.through {
				if got.status != 200 || got.body != "origin:"+c.path {
					t.Fatalf("crawler answer: %d %q", got.status, got.body)
				}
				if s := r.origin.last(t); s.visitor != "" || s.event != "" {
					t.Fatalf("a crawler was forwarded as a visitor: %+v", s)
				}
			} else if c.path == "/show/seats" && (got.status != 200 || !strings.Contains(got.body, "The Show")) {
				t.Fatalf("not the waiting room: %d %.200s", got.status, got.body)
			}
			if sc := got.header.Values("Set-Cookie"); len(sc) != 0 {
				t.Fatalf("cookies set: %q", sc)
			}
			if c := v.c.Jar.Cookies(mustURL(t, r.url)); len(c) != 0 {
				t.Fatalf("the crawler got cookies: %v", c)
			}
		})
	}
	if n := counterValue(t, r.reg, "waitroom_crawler_passes_total", map[string]string{"crawler": "googlebot"}); n != 3 {
		t.Fatalf("crawler passes %v, want 3", n)
	}
	if n := counterValue(t, r.reg, "waitroom_crawler_spoofed_total", map[string]string{"crawler": "googlebot"}); n != 2 {
		t.Fatalf("spoofed %v, want 2", n)
	}
	if n := counterValue(t, r.reg, "waitroom_requests_total", map[string]string{"action": "queue", "outcome": "crawler"}); n != 3 {
		t.Fatalf("requests_total{outcome=crawler} %v, want 3", n)
	}
}

// The auth_request endpoint applies the same allowlist.
func TestCrawlerAuthRequest(t *testing.T) {
	r := newRig(t, withCrawler())
	v := newVisitor(t, googlebotUA)
	if got := v.do(t, "GET", r.url+"/_wr/auth", "", "X-Original-URI", "/show/x", "X-Forwarded-For", "66.249.64.1"); got.status != 204 {
		t.Fatalf("crawler at /auth: %d %s", got.status, got.body)
	}
	if got := v.do(t, "GET", r.url+"/_wr/auth", "", "X-Original-URI", "/show/x", "X-Forwarded-For", "198.51.100.1"); got.status != 401 {
		t.Fatalf("spoofed crawler at /auth: %d %s", got.status, got.body)
	}
}

func TestCrawlerOptions(t *testing.T) {
	set := prefixSet{netip.MustParsePrefix("10.0.0.0/8")}
	for _, c := range []struct {
		name string
		cs   []Crawler
		want string
	}{
		{"no name", []Crawler{{UserAgents: []string{"x"}, Ranges: set}}, "no name"},
		{"twice", []Crawler{{Name: "a", UserAgents: []string{"x"}, Ranges: set}, {Name: "a", UserAgents: []string{"y"}, Ranges: set}}, "twice"},
		{"no agents", []Crawler{{Name: "a", Ranges: set}}, "no user agents"},
		{"empty agent", []Crawler{{Name: "a", UserAgents: []string{""}, Ranges: set}}, "every request"},
		{"no ranges", []Crawler{{Name: "a", UserAgents: []string{"x"}}}, "no address ranges"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := compileCrawlers(c.cs, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestContainsFold(t *testing.T) {
	for _, c := range []struct {
		s, pat string
		want   bool
	}{
		{"Mozilla/5.0 (compatible; Googlebot/2.1)", "googlebot", true},
		{"GOOGLEBOT", "googlebot", true},
		{"Googlebo", "googlebot", false},
		{"", "x", false},
		{"x", "", true},
		{"bingbot/2.0", "bingbot", true},
	} {
		if got := containsFold([]byte(c.s), []byte(c.pat)); got != c.want {
			t.Errorf("containsFold(%q, %q) = %v", c.s, c.pat, got)
		}
	}
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
