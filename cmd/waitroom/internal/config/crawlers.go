package config

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/waitroom/waitroom/plugins/iplist"
)

// Bounds of serve.crawlers.
const (
	// MaxCrawlerName bounds serve.crawlers[].name.
	MaxCrawlerName = 64
	// MinCrawlerUserAgent is the shortest user agent pattern: a shorter
	// one matches nearly every browser.
	MinCrawlerUserAgent = 3
	// MaxCrawlerUserAgent bounds one user agent pattern.
	MaxCrawlerUserAgent = 256
	// MinCrawlerPrefixV4 and MinCrawlerPrefixV6 are the widest ranges a
	// crawler's file may hold: a crawler's operator publishes small
	// blocks, and a wide one (0.0.0.0/0 in a wrong file) would let anyone
	// claiming the user agent through.
	MinCrawlerPrefixV4 = 8
	MinCrawlerPrefixV6 = 32
)

// Ranges reads and parses the crawler's ip_ranges_file, refusing ranges
// wider than MinCrawlerPrefixV4 and MinCrawlerPrefixV6. Its errors name
// the problem, not the field.
func (c *Crawler) Ranges() ([]netip.Prefix, error) {
	f := c.IPRangesFormat
	if f == "" {
		f = string(iplist.FormatAuto)
	}
	format, err := iplist.ParseFormat(f)
	if err != nil {
		return nil, err
	}
	ps, err := iplist.Load(c.IPRangesFile, format)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		if p.Addr().Is4() && p.Bits() < MinCrawlerPrefixV4 || !p.Addr().Is4() && p.Bits() < MinCrawlerPrefixV6 {
			return nil, fmt.Errorf("the range %s is wider than a /%d (IPv4) or /%d (IPv6): not a crawler's list", p, MinCrawlerPrefixV4, MinCrawlerPrefixV6)
		}
	}
	return ps, nil
}

// crawlers checks serve.crawlers, reading every ranges file.
func (v *validator) crawlers(path string, cs []Crawler) {
	seen := make(map[string]int, len(cs))
	for i := range cs {
		c := &cs[i]
		p := fmt.Sprintf("%s[%d]", path, i)
		if !crawlerName(c.Name) {
			v.fail(p+".name", "must be 1 to %d characters from [a-z0-9_-], such as googlebot (got %q)", MaxCrawlerName, c.Name)
		} else if j, dup := seen[c.Name]; dup {
			v.fail(p+".name", "repeats %s[%d].name", path, j)
		} else {
			seen[c.Name] = i
		}
		if len(c.UserAgents) == 0 {
			v.fail(p+".user_agents", "must list at least one part of the crawler's User-Agent, such as Googlebot")
		}
		for j, ua := range c.UserAgents {
			if n := len(ua); n < MinCrawlerUserAgent || n > MaxCrawlerUserAgent || strings.TrimSpace(ua) != ua || !printableASCII(ua) {
				v.fail(fmt.Sprintf("%s.user_agents[%d]", p, j), "must be %d to %d printable ASCII characters without white space at either end (got %q)",
					MinCrawlerUserAgent, MaxCrawlerUserAgent, ua)
			}
		}
		if c.IPRangesFormat != "" {
			if _, err := iplist.ParseFormat(c.IPRangesFormat); err != nil {
				v.fail(p+".ip_ranges_format", "must be one of %v (got %q)", iplist.Formats, c.IPRangesFormat)
				continue
			}
		}
		if c.IPRangesFile == "" {
			v.fail(p+".ip_ranges_file", "must be set: the file of the address ranges the crawler's operator publishes (a user agent alone is trivially spoofed)")
			continue
		}
		if _, err := c.Ranges(); err != nil {
			v.fail(p+".ip_ranges_file", "%v", err)
		}
	}
}

func crawlerName(s string) bool {
	if s == "" || len(s) > MaxCrawlerName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
