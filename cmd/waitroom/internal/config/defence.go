package config

import (
	"time"

	"github.com/waitroom/waitroom/challenge"

	"go.yaml.in/yaml/v3"
)

// BotDefence configures what every event with a challenge shares: the
// key that signs proof-of-work challenges, the risk signals and their
// weights, an external scorer, and the CAPTCHA providers events name.
type BotDefence struct {
	// Key that seals proof-of-work challenges (AES-256-GCM under a key
	// derived with HMAC-SHA256) and marks shadow visitors, at least 32
	// bytes, the same on every replica; from the environment
	// (${WAITROOM_CHALLENGE_SECRET}; waitroom keygen -secret makes one).
	// Required when an event's challenge is on or dry_run.
	Secret string `yaml:"secret"`
	// How long a visitor has to solve a challenge and join with it.
	ChallengeTTL Duration `yaml:"challenge_ttl"`
	// How long a client's highest score (its address, an IPv6 address's
	// /64, with its TLS fingerprint) raises the work of its later
	// challenges, up to the heavy work: a client probing which headers
	// score low learns nothing after its first suspicious try. Kept per
	// replica.
	SuspectMemory Duration `yaml:"suspect_memory"`
	// Request header that carries the client's JA4 TLS fingerprint, set by
	// a front proxy that terminates TLS; believed only from
	// serve.trusted_proxies. Empty: JA4 is known only when waitroom
	// terminates TLS itself.
	JA4Header string `yaml:"ja4_header"`
	// The risk signals, each a plugin with a weight; the score is the sum
	// of weight × suspicion over the signals, at most 100. Left out: the
	// default set (headers 60, rate 40, ja4 30, consistency 40, client 30).
	Signals []Signal `yaml:"signals"`
	// A site's own bot detection, asked over HTTP at every scoring; its
	// 0–100 answer counts like a signal's. Optional.
	Scorer *Plugin `yaml:"scorer"`
	// CAPTCHA providers that events name in challenge.captcha.
	Captcha []NamedPlugin `yaml:"captcha"`
}

// Signal is one weighted risk signal.
type Signal struct {
	// The signal plugin: headers, ja4, consistency, client, ip_ranges, rate
	// or known_bad.
	Type string `yaml:"type"`
	// Score points the signal adds at full suspicion, 0 to 100.
	Weight float64 `yaml:"weight"`
	// The plugin's own settings (see the plugin list in docs/configuration.md).
	Config yaml.Node `yaml:"config"`
}

// Plugin is a plugin instance: its type and its own settings.
type Plugin struct {
	// The plugin's name in its registry.
	Type string `yaml:"type"`
	// Score points an external scorer adds at its full answer (100), 0 to
	// 100; ignored by other plugins.
	Weight float64 `yaml:"weight"`
	// The plugin's own settings (see the plugin list in docs/configuration.md).
	Config yaml.Node `yaml:"config"`
}

// NamedPlugin is a plugin instance that others refer to by name.
type NamedPlugin struct {
	// Name events use to refer to it, 1 to 64 characters from [a-z0-9_-].
	Name string `yaml:"name"`
	// The plugin: turnstile, hcaptcha or recaptcha.
	Type string `yaml:"type"`
	// The plugin's own settings (see the plugin list in docs/configuration.md).
	Config yaml.Node `yaml:"config"`
}

// Sink is an event sink: a plugin that receives joined, admitted, hold,
// sold and sold_out events.
type Sink struct {
	// The sink plugin: webhook.
	Type string `yaml:"type"`
	// The plugin's own settings (see the plugin list in docs/configuration.md).
	Config yaml.Node `yaml:"config"`
}

// EventChallenge is an event's bot defence at join. In YAML it is either
// a mode alone (challenge: on) or a mapping with the mode and settings.
type EventChallenge struct {
	// off (anyone may join), on (score every join and apply the band's
	// action) or dry_run (score and log what would be done, but ask only
	// the light proof of work).
	Mode ChallengeMode `yaml:"mode"`
	// Score thresholds of the actions: a score at or above a threshold
	// gets that action (the highest one reached wins); below heavy_pow the
	// light proof of work. 0 disables a band.
	Bands Bands `yaml:"bands"`
	// The light proof of work, asked of everyone scored below heavy_pow.
	Light Work `yaml:"light"`
	// The heavy proof of work.
	Heavy Work `yaml:"heavy"`
	// Name of a bot_defence.captcha provider for the captcha band (and,
	// with nojs_captcha, as an alternative to the work). Empty: the
	// captcha band asks the heavy proof of work instead.
	Captcha string `yaml:"captcha"`
	// Let visitors join by solving the CAPTCHA alone instead of the proof
	// of work: the page offers "solve a CAPTCHA instead" while it works,
	// for devices too slow or too locked down for the work (needs
	// captcha). The providers' widgets run JavaScript too: a browser
	// without any gets the page's <noscript> explanation. The score still
	// applies: shadow and block stay.
	NoJSCaptcha bool `yaml:"nojs_captcha"`
}

// ChallengeMode is a value of events[].challenge.mode.
type ChallengeMode string

// Values of events[].challenge.mode.
const (
	ChallengeOff    ChallengeMode = "off"
	ChallengeOn     ChallengeMode = "on"
	ChallengeDryRun ChallengeMode = "dry_run"
)

// Bands are the score thresholds of the bot-defence actions, 0 to 100,
// ascending among those not 0.
type Bands struct {
	// From this score, the heavy proof of work.
	HeavyPoW int `yaml:"heavy_pow"`
	// From this score, a CAPTCHA (or the heavy proof of work without a
	// provider).
	Captcha int `yaml:"captcha"`
	// From this score, the shadow queue: the join succeeds and the visitor
	// waits, but is never admitted.
	Shadow int `yaml:"shadow"`
	// From this score, 403.
	Block int `yaml:"block"`
}

// Work is a proof of work's size: puzzles sub-puzzles of bits leading
// zero bits each, K·2^bits hashes expected.
type Work struct {
	// Leading zero bits of each sub-puzzle's SHA-256, 1 to 32.
	Bits int `yaml:"bits"`
	// Independent sub-puzzles, 1 to 64: more make the solve time more
	// predictable (spread about 1/√puzzles) and cost a hash each to verify.
	Puzzles int `yaml:"puzzles"`
}

// Defaults of bot_defence and events[].challenge.
const (
	DefaultChallengeTTL  = 5 * time.Minute
	DefaultSuspectMemory = 10 * time.Minute
	DefaultBandHeavyPoW  = 30
	DefaultBandCaptcha   = 60
	DefaultBandShadow    = 80
	DefaultBandBlock     = 95
	DefaultLightBits     = challenge.DefaultLightBits
	DefaultHeavyBits     = challenge.DefaultHeavyBits
	DefaultPuzzles       = challenge.DefaultPuzzles
)

// ChallengesOn reports whether an event's challenge is on or dry_run: the
// bot defence then runs, and bot_defence.secret is required.
func (c *Config) ChallengesOn() bool {
	for i := range c.Events {
		if m := c.Events[i].Challenge.Mode; m == ChallengeOn || m == ChallengeDryRun {
			return true
		}
	}
	return false
}

// DefaultSignals is the signal set when bot_defence.signals is left out.
func DefaultSignals() []Signal {
	return []Signal{{Type: "headers", Weight: 60}, {Type: "rate", Weight: 40}, {Type: "ja4", Weight: 30},
		{Type: "consistency", Weight: 40}, {Type: "client", Weight: 30}}
}

func defaultEventChallenge() EventChallenge {
	return EventChallenge{
		Mode:  ChallengeOff,
		Bands: Bands{HeavyPoW: DefaultBandHeavyPoW, Captcha: DefaultBandCaptcha, Shadow: DefaultBandShadow, Block: DefaultBandBlock},
		Light: Work{Bits: DefaultLightBits, Puzzles: DefaultPuzzles},
		Heavy: Work{Bits: DefaultHeavyBits, Puzzles: DefaultPuzzles},
	}
}

// UnmarshalYAML reads a mode alone (challenge: on) or a mapping, starting
// from the defaults.
func (c *EventChallenge) UnmarshalYAML(n *yaml.Node) error {
	*c = defaultEventChallenge()
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&c.Mode)
	}
	type plain EventChallenge
	return decodeMapping(n, "EventChallenge", (*plain)(c))
}
