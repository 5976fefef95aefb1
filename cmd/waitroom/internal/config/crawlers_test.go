package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestValidateCrawlers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	google := write("googlebot.json", `{"creationTime":"2026-11-01T00:00:00","prefixes":[{"ipv4Prefix":"66.249.64.0/27"},{"ipv6Prefix":"2001:4860:4801:10::/64"}]}`)
	cidr := write("bing.txt", "# bingbot\n157.55.39.0/24\n2620:1ec:c11::/48\n")
	wide := write("wide.txt", "0.0.0.0/0\n")
	wide6 := write("wide6.txt", "2000::/3\n")
	broken := write("broken.json", `{"prefixes":[{"ipv4Prefix":"66.249.64.0/33"}]}`)
	empty := write("empty.txt", "# nothing\n")
	missing := filepath.Join(dir, "missing.json")
	tests := []struct {
		name string
		cs   []Crawler
		want []string
	}{
		{"google and bing", []Crawler{
			{Name: "googlebot", UserAgents: []string{"Googlebot"}, IPRangesFile: google},
			{Name: "bingbot", UserAgents: []string{"bingbot", "BingPreview"}, IPRangesFile: cidr, IPRangesFormat: "cidr"}}, nil},
		{"everything wrong", []Crawler{
			{Name: "Google Bot", UserAgents: []string{"ab", " Googlebot", "x\ty"}, IPRangesFile: google},
			{Name: "a", IPRangesFile: ""},
			{Name: "a", UserAgents: []string{"abc"}, IPRangesFile: google, IPRangesFormat: "xml"}}, []string{
			`serve.crawlers[0].name: must be 1 to 64 characters from [a-z0-9_-], such as googlebot (got "Google Bot")`,
			`serve.crawlers[0].user_agents[0]: must be 3 to 256 printable ASCII characters without white space at either end (got "ab")`,
			`serve.crawlers[0].user_agents[1]: must be 3 to 256 printable ASCII characters without white space at either end (got " Googlebot")`,
			`serve.crawlers[0].user_agents[2]: must be 3 to 256 printable ASCII characters without white space at either end (got "x\ty")`,
			"serve.crawlers[1].user_agents: must list at least one part of the crawler's User-Agent, such as Googlebot",
			"serve.crawlers[1].ip_ranges_file: must be set: the file of the address ranges the crawler's operator publishes (a user agent alone is trivially spoofed)",
			"serve.crawlers[2].name: repeats serve.crawlers[1].name",
			`serve.crawlers[2].ip_ranges_format: must be one of [auto cidr aws gcp azure oracle geofeed] (got "xml")`}},
		{"files", []Crawler{
			{Name: "a", UserAgents: []string{"abc"}, IPRangesFile: wide},
			{Name: "b", UserAgents: []string{"abc"}, IPRangesFile: wide6},
			{Name: "c", UserAgents: []string{"abc"}, IPRangesFile: broken},
			{Name: "d", UserAgents: []string{"abc"}, IPRangesFile: empty},
			{Name: "e", UserAgents: []string{"abc"}, IPRangesFile: missing},
			{Name: "f", UserAgents: []string{"abc"}, IPRangesFile: google, IPRangesFormat: "cidr"}}, []string{
			"serve.crawlers[0].ip_ranges_file: the range 0.0.0.0/0 is wider than a /8 (IPv4) or /32 (IPv6): not a crawler's list",
			"serve.crawlers[1].ip_ranges_file: the range 2000::/3 is wider than a /8 (IPv4) or /32 (IPv6): not a crawler's list",
			`serve.crawlers[2].ip_ranges_file: iplist: invalid list: prefixes[0].ipv4Prefix: "66.249.64.0/33" is not an IP prefix or address`,
			"serve.crawlers[3].ip_ranges_file: iplist: no prefixes in the list (format cidr)",
			"serve.crawlers[4].ip_ranges_file: iplist: open " + missing + ": no such file or directory",
			`serve.crawlers[5].ip_ranges_file: iplist: invalid list: line 1: "{\"creationTime\":\"2026-11-01T00:00:00\",\"prefixes\":[{\"ipv4Prefix\":…" is not an IP prefix or address`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validProxy()
			c.Serve.Crawlers = tt.cs
			wantProblems(t, ValidateFor(c, RoleProxy), tt.want...)
		})
	}
}

func TestCrawlerRanges(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "googlebot.json")
	if err := os.WriteFile(p, []byte(`{"prefixes":[{"ipv4Prefix":"66.249.64.0/27"},{"ipv6Prefix":"2001:4860:4801:10::/64"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := Crawler{Name: "googlebot", UserAgents: []string{"Googlebot"}, IPRangesFile: p}
	ps, err := c.Ranges()
	if err != nil || len(ps) != 2 || ps[0].String() != "66.249.64.0/27" || ps[1].String() != "2001:4860:4801:10::/64" {
		t.Fatalf("Ranges() = %v, %v", ps, err)
	}
}

// FuzzCrawlerRanges: a crawler's ranges file never panics the loader, and
// what it accepts is a non-empty list of masked prefixes no wider than
// the bounds.
func FuzzCrawlerRanges(f *testing.F) {
	for _, s := range []string{
		`{"creationTime":"x","prefixes":[{"ipv4Prefix":"66.249.64.0/27"},{"ipv6Prefix":"2001:4860:4801:10::/64"}]}`,
		"157.55.39.0/24\n# c\n2620:1ec:c11::/48\n",
		"0.0.0.0/0\n", "::/0\n", "10.0.0.0/8\n2001:db8::/32\n", `{"prefixes":[{"ipv4Prefix":"1.2.3.4/7"}]}`, "",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "ranges")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c := Crawler{Name: "x", UserAgents: []string{"bot"}, IPRangesFile: p}
		ps, err := c.Ranges()
		if err != nil {
			return
		}
		if len(ps) == 0 {
			t.Fatal("no ranges and no error")
		}
		for _, pr := range ps {
			if !pr.IsValid() || pr != pr.Masked() {
				t.Fatalf("%v is not a masked prefix", pr)
			}
			if pr.Addr().Is4() && pr.Bits() < MinCrawlerPrefixV4 || !pr.Addr().Is4() && pr.Bits() < MinCrawlerPrefixV6 {
				t.Fatalf("%v is wider than the bounds", pr)
			}
		}
	})
}
