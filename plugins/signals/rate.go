package signals

import (
	"context"
	"time"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

// Defaults and bounds of the rate section. The limits count join attempts
// (every scored request) per window. A visitor joins once and retries a
// few times; many visitors share one address behind carrier-grade or
// office NAT, and a /24 or /64 more, so the soft limits leave room for
// that and the hard ones are far above any person's rate.
const (
	DefaultRateWindow        = "1m"
	DefaultRatePerIPSoft     = 20
	DefaultRatePerIPHard     = 120
	DefaultRatePerPrefixSoft = 100
	DefaultRatePerPrefixHard = 1000
	// DefaultRateMaxKeys bounds each of the two tables (addresses,
	// prefixes): about 15 MiB each when full.
	DefaultRateMaxKeys = 100_000
	MinRateWindow      = time.Second
	MaxRateWindow      = 24 * time.Hour
	MaxRateMaxKeys     = 10_000_000
)

// RateConfig is the section of the rate signal: requests per address and
// per network prefix (IPv4 /24, IPv6 /64) over a sliding window, with
// suspicion rising from 0 at the soft limit to 1 at the hard limit (see
// challenge.RateSignal).
type RateConfig struct {
	// Length of the sliding window, a Go duration from 1s to 24h.
	Window string `yaml:"window"`
	// Limits per address.
	PerIP RateLimitConfig `yaml:"per_ip"`
	// Limits per IPv4 /24 or IPv6 /64.
	PerPrefix RateLimitConfig `yaml:"per_prefix"`
	// Addresses (and, separately, prefixes) tracked at most; the least
	// recently seen are forgotten first. 1 to 10 000 000.
	MaxKeys int `yaml:"max_keys"`
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
		Window:    DefaultRateWindow,
		PerIP:     RateLimitConfig{Soft: DefaultRatePerIPSoft, Hard: DefaultRatePerIPHard},
		PerPrefix: RateLimitConfig{Soft: DefaultRatePerPrefixSoft, Hard: DefaultRatePerPrefixHard},
		MaxKeys:   DefaultRateMaxKeys,
	}
}

func (l RateLimitConfig) off() bool { return l.Soft == 0 && l.Hard == 0 }

// Validate checks c.
func (c RateConfig) Validate() error {
	var p problems
	if d, err := time.ParseDuration(c.Window); err != nil {
		p.fail("window", "must be a duration such as 30s or 1m (got %q)", c.Window)
	} else if d < MinRateWindow || d > MaxRateWindow {
		p.fail("window", "must be from %v to %v (got %v)", MinRateWindow, MaxRateWindow, d)
	}
	for _, l := range []struct {
		path string
		l    RateLimitConfig
	}{{"per_ip", c.PerIP}, {"per_prefix", c.PerPrefix}} {
		if l.l.off() {
			continue
		}
		if l.l.Soft < 0 {
			p.fail(l.path+".soft", "must be 0 or more (got %d)", l.l.Soft)
		}
		if l.l.Hard <= l.l.Soft {
			p.fail(l.path+".hard", "must be above soft (%d), or both 0 to turn the limit off (got %d)", l.l.Soft, l.l.Hard)
		}
	}
	if c.PerIP.off() && c.PerPrefix.off() {
		p.fail("", "per_ip and per_prefix are both off: the signal would judge nothing")
	}
	if c.MaxKeys < 1 || c.MaxKeys > MaxRateMaxKeys {
		p.fail("max_keys", "must be 1 to %d (got %d)", MaxRateMaxKeys, c.MaxKeys)
	}
	return p.err()
}

func buildRate(_ context.Context, c RateConfig, _ plugins.Env) (challenge.Signal, error) {
	w, err := time.ParseDuration(c.Window)
	if err != nil {
		return nil, plugins.Fail("window", "%v", err)
	}
	return challenge.NewRateSignal(challenge.RateOptions{
		Window:    w,
		PerIP:     challenge.RateLimit{Soft: c.PerIP.Soft, Hard: c.PerIP.Hard},
		PerPrefix: challenge.RateLimit{Soft: c.PerPrefix.Soft, Hard: c.PerPrefix.Hard},
		MaxKeys:   c.MaxKeys,
	})
}
