package signals

import (
	"context"
	"fmt"
	"time"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

// Defaults and bounds of the rate section. The limits count challenge
// fetches, one per queue place tried (see challenge.RateSignal), per
// window. A person asks for a place once and retries a few times, and a
// household or an office of a few fans shares one address: up to about
// 9 a minute from an address stays light work with the example weight
// (40), 10 and more get the heavy work (0.75 × 40 = 30). A /24 or /48
// (a street of homes, a site) gets twice that. Carrier-grade NAT puts
// many more people behind one address or /24: see docs/bot-defence.md.
// The fingerprint limits are high because every visitor of one browser
// version shares a fingerprint (the browsers of the fingerprint data are
// not counted; others, such as Firefox and Safari unless listed, are).
const (
	DefaultRateWindow                 = "1m"
	DefaultRatePerIPSoft              = 4
	DefaultRatePerIPHard              = 12
	DefaultRatePerPrefixSoft          = 8
	DefaultRatePerPrefixHard          = 24
	DefaultRatePerFingerprintSoft     = 1000
	DefaultRatePerFingerprintHard     = 10000
	DefaultRateLongWindow             = "1h"
	DefaultRateLongPerIPSoft          = 30
	DefaultRateLongPerIPHard          = 120
	DefaultRateLongPerPrefixSoft      = 100
	DefaultRateLongPerPrefixHard      = 400
	DefaultRateLongPerFingerprintSoft = 20000
	DefaultRateLongPerFingerprintHard = 200000
	DefaultRateIPv4Prefix             = challenge.RatePrefixBitsV4
	DefaultRateIPv6Prefix             = challenge.RatePrefixBitsV6
	// DefaultRateMaxKeys bounds each of the three tables (addresses,
	// prefixes, fingerprints): about 20 MiB each when full.
	DefaultRateMaxKeys = 100_000
	MinRateWindow      = time.Second
	MaxRateWindow      = 24 * time.Hour
	MaxRateMaxKeys     = 10_000_000
)

// RateConfig is the section of the rate signal: challenge fetches per
// address (an IPv6 /64), per network prefix (IPv4 /24, IPv6 /48) and per
// client fingerprint (JA4 with the header fingerprint) over a sliding
// window and a long one, with suspicion rising from 0 at the soft limit
// to 1 at the hard limit (see challenge.RateSignal); the highest counts.
type RateConfig struct {
	// Length of the sliding window, a Go duration from 1s to 24h.
	Window string `yaml:"window"`
	// Limits per address (an IPv6 address counts as its /64).
	PerIP RateLimitConfig `yaml:"per_ip"`
	// Limits per IPv4 or IPv6 prefix (ipv4_prefix, ipv6_prefix).
	PerPrefix RateLimitConfig `yaml:"per_prefix"`
	// Limits per client fingerprint, across addresses: requests with a
	// JA4 that is not a browser's (the fingerprint data's or browsers').
	PerFingerprint RateLimitConfig `yaml:"per_fingerprint"`
	// A second, longer window and its limits, for clients that pace
	// themselves under the first window's.
	Long RateWindowConfig `yaml:"long"`
	// Width of an IPv4 prefix, 8 to 32 bits.
	IPv4Prefix int `yaml:"ipv4_prefix"`
	// Width of an IPv6 prefix, 16 to 64 bits.
	IPv6Prefix int `yaml:"ipv6_prefix"`
	// JA4 fingerprints of browsers not to count per fingerprint, besides
	// the browsers of the shipped fingerprint data.
	Browsers []string `yaml:"browsers"`
	// Keys tracked at most in each table (addresses, prefixes,
	// fingerprints); the least recently seen are forgotten first. 1 to
	// 10 000 000.
	MaxKeys int `yaml:"max_keys"`
}

// RateWindowConfig is a window and its limits. A window of "0" turns it
// off.
type RateWindowConfig struct {
	// Length of the window, a Go duration from 1s to 24h, longer than the
	// first window; "0" turns the long window off.
	Window string `yaml:"window"`
	// Limits per address.
	PerIP RateLimitConfig `yaml:"per_ip"`
	// Limits per prefix.
	PerPrefix RateLimitConfig `yaml:"per_prefix"`
	// Limits per client fingerprint.
	PerFingerprint RateLimitConfig `yaml:"per_fingerprint"`
}

// RateLimitConfig is a pair of limits in requests per window. Both 0 turns
// the limit off.
type RateLimitConfig struct {
	// The rate at or below which there is no suspicion, 0 or more.
	Soft int `yaml:"soft"`
	// The rate of full suspicion, above soft.
	Hard int `yaml:"hard"`
}

// DefaultRateConfig is the rate section with the Default… values; a
// section overrides only the keys it sets.
func DefaultRateConfig() RateConfig {
	return RateConfig{
		Window:         DefaultRateWindow,
		PerIP:          RateLimitConfig{Soft: DefaultRatePerIPSoft, Hard: DefaultRatePerIPHard},
		PerPrefix:      RateLimitConfig{Soft: DefaultRatePerPrefixSoft, Hard: DefaultRatePerPrefixHard},
		PerFingerprint: RateLimitConfig{Soft: DefaultRatePerFingerprintSoft, Hard: DefaultRatePerFingerprintHard},
		Long: RateWindowConfig{
			Window:         DefaultRateLongWindow,
			PerIP:          RateLimitConfig{Soft: DefaultRateLongPerIPSoft, Hard: DefaultRateLongPerIPHard},
			PerPrefix:      RateLimitConfig{Soft: DefaultRateLongPerPrefixSoft, Hard: DefaultRateLongPerPrefixHard},
			PerFingerprint: RateLimitConfig{Soft: DefaultRateLongPerFingerprintSoft, Hard: DefaultRateLongPerFingerprintHard},
		},
		IPv4Prefix: DefaultRateIPv4Prefix,
		IPv6Prefix: DefaultRateIPv6Prefix,
		MaxKeys:    DefaultRateMaxKeys,
	}
}

func (l RateLimitConfig) off() bool { return l.Soft == 0 && l.Hard == 0 }

func (l RateLimitConfig) limit() challenge.RateLimit {
	return challenge.RateLimit{Soft: l.Soft, Hard: l.Hard}
}

// windows parses both windows; long is 0 when off.
func (c RateConfig) windows() (short, long time.Duration, shortErr, longErr error) {
	short, shortErr = time.ParseDuration(c.Window)
	if c.Long.Window != "0" {
		long, longErr = time.ParseDuration(c.Long.Window)
	}
	return
}

// Validate checks c.
func (c RateConfig) Validate() error {
	var p problems
	short, long, serr, lerr := c.windows()
	for _, w := range []struct {
		path string
		d    time.Duration
		err  error
		raw  string
	}{{"window", short, serr, c.Window}, {"long.window", long, lerr, c.Long.Window}} {
		switch {
		case w.err != nil:
			p.fail(w.path, "must be a duration such as 30s or 1m (got %q)", w.raw)
		case w.path == "long.window" && w.raw == "0":
		case w.d < MinRateWindow || w.d > MaxRateWindow:
			p.fail(w.path, "must be from %v to %v (got %v)", MinRateWindow, MaxRateWindow, w.d)
		}
	}
	if serr == nil && lerr == nil && long != 0 && long <= short && short >= MinRateWindow && short <= MaxRateWindow {
		p.fail("long.window", "must be longer than window (%v; got %v)", short, long)
	}
	limits := []struct {
		path string
		l    RateLimitConfig
	}{{"per_ip", c.PerIP}, {"per_prefix", c.PerPrefix}, {"per_fingerprint", c.PerFingerprint},
		{"long.per_ip", c.Long.PerIP}, {"long.per_prefix", c.Long.PerPrefix}, {"long.per_fingerprint", c.Long.PerFingerprint}}
	on := false
	for _, l := range limits {
		if l.l.off() {
			continue
		}
		on = on || !(long == 0 && len(l.path) > 5 && l.path[:5] == "long.")
		if l.l.Soft < 0 {
			p.fail(l.path+".soft", "must be 0 or more (got %d)", l.l.Soft)
		}
		if l.l.Hard <= l.l.Soft {
			p.fail(l.path+".hard", "must be above soft (%d), or both 0 to turn the limit off (got %d)", l.l.Soft, l.l.Hard)
		}
	}
	if !on {
		p.fail("", "every limit is off: the signal would judge nothing")
	}
	if c.IPv4Prefix < 8 || c.IPv4Prefix > 32 {
		p.fail("ipv4_prefix", "must be 8 to 32 (got %d)", c.IPv4Prefix)
	}
	if c.IPv6Prefix < 16 || c.IPv6Prefix > 64 {
		p.fail("ipv6_prefix", "must be 16 to 64 (got %d)", c.IPv6Prefix)
	}
	for i, b := range c.Browsers {
		if !challenge.ValidJA4(b) {
			p.fail(fmt.Sprintf("browsers[%d]", i), "must be a JA4 fingerprint such as %s (got %q)", ja4Example, b)
		}
	}
	if c.MaxKeys < 1 || c.MaxKeys > MaxRateMaxKeys {
		p.fail("max_keys", "must be 1 to %d (got %d)", MaxRateMaxKeys, c.MaxKeys)
	}
	return p.err()
}

func buildRate(_ context.Context, c RateConfig, _ plugins.Env) (challenge.Signal, error) {
	short, long, serr, lerr := c.windows()
	if serr != nil {
		return nil, plugins.Fail("window", "%v", serr)
	}
	if lerr != nil {
		return nil, plugins.Fail("long.window", "%v", lerr)
	}
	browsers := append(browserJA4s(challenge.DefaultFingerprints()), c.Browsers...)
	return challenge.NewRateSignal(challenge.RateOptions{
		Window:         short,
		PerIP:          c.PerIP.limit(),
		PerPrefix:      c.PerPrefix.limit(),
		PerFingerprint: c.PerFingerprint.limit(),
		Long: challenge.RateWindow{Window: long, PerIP: c.Long.PerIP.limit(), PerPrefix: c.Long.PerPrefix.limit(),
			PerFingerprint: c.Long.PerFingerprint.limit()},
		PrefixBitsV4: c.IPv4Prefix,
		PrefixBitsV6: c.IPv6Prefix,
		Browsers:     browsers,
		MaxKeys:      c.MaxKeys,
	})
}
