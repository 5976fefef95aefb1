package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/plugins"
	// The built-in plugins validate their own sections.
	_ "github.com/waitroom/waitroom/plugins/builtin"
)

// MinChallengeSecretBytes bounds bot_defence.secret from below.
const MinChallengeSecretBytes = 32

// defence checks bot_defence and sinks. The secret is required only when
// an event's challenge is on or dry_run.
func (v *validator) defence(p string, d *BotDefence, c *Config) {
	used := c.ChallengesOn()
	for i, b := range c.Serve.Binding {
		if b == BindTLSStack && (!used || (c.Serve.TLS.Listen == "" && d.JA4Header == "")) {
			v.fail(fmt.Sprintf("serve.binding[%d]", i), "tls_stack needs the client's JA4: an event's challenge on, and TLS ending here (serve.tls.listen) or bot_defence.ja4_header")
		}
	}
	if d.Secret != "" || used {
		if d.Secret == "" {
			v.fail(p+".secret", "must be set when an event's challenge is on or dry_run: the key that signs challenges, from the environment (waitroom keygen -secret makes one)")
		} else {
			v.secret(p+".secret", d.Secret, MinChallengeSecretBytes)
		}
	}
	v.positive(p+".challenge_ttl", d.ChallengeTTL)
	v.positive(p+".suspect_memory", d.SuspectMemory)
	if d.JA4Header != "" {
		v.headerName(p+".ja4_header", d.JA4Header)
	}
	for i := range d.Signals {
		sp := fmt.Sprintf("%s.signals[%d]", p, i)
		s := &d.Signals[i]
		v.weight(sp+".weight", s.Weight)
		v.plugin(sp, s.Type, &s.Config, plugins.Signals.Names(), plugins.Signals.Validate)
	}
	if d.Scorer != nil {
		v.weight(p+".scorer.weight", d.Scorer.Weight)
		v.plugin(p+".scorer", d.Scorer.Type, &d.Scorer.Config, plugins.Scorers.Names(), plugins.Scorers.Validate)
	}
	names := map[string]int{}
	for i := range d.Captcha {
		cp := fmt.Sprintf("%s.captcha[%d]", p, i)
		n := &d.Captcha[i]
		if !validName(n.Name) {
			v.fail(cp+".name", "must be 1 to %d characters from [a-z0-9_-] (got %q)", MaxNameLength, n.Name)
		} else if j, dup := names[n.Name]; dup {
			v.fail(cp+".name", "repeats %s.captcha[%d].name", p, j)
		} else {
			names[n.Name] = i
		}
		v.plugin(cp, n.Type, &n.Config, plugins.Captcha.Names(), plugins.Captcha.Validate)
	}
	for i := range c.Events {
		v.eventChallenge(fmt.Sprintf("events[%d].challenge", i), &c.Events[i].Challenge, names)
	}
	for i := range c.Sinks {
		s := &c.Sinks[i]
		v.plugin(fmt.Sprintf("sinks[%d]", i), s.Type, &s.Config, plugins.Sinks.Names(), plugins.Sinks.Validate)
	}
}

func (v *validator) weight(path string, w float64) {
	if !(w >= 0 && w <= 100) {
		v.fail(path, "must be 0 to 100 score points (got %s)", fmtFloat(w))
	}
}

// plugin checks a plugin reference: a known type, and its section as the
// plugin validates it.
func (v *validator) plugin(p, typ string, cfg *yaml.Node, known []string, validate func(string, *yaml.Node) error) {
	if typ == "" {
		v.fail(p+".type", "must be set: one of %v", known)
		return
	}
	for _, fe := range plugins.FieldErrors(validate(typ, cfg)) {
		if fe.Path == "type" {
			v.fail(p+".type", "%s", fe.Msg)
			continue
		}
		v.fail(joinPath(p+".config", fe.Path), "%s", fe.Msg)
	}
}

func (v *validator) eventChallenge(p string, ch *EventChallenge, captcha map[string]int) {
	switch ch.Mode {
	case ChallengeOff, ChallengeOn, ChallengeDryRun:
	default:
		v.fail(p+".mode", "must be off, on or dry_run (got %q)", ch.Mode)
	}
	b := ch.Bands
	last, lastName := 0, ""
	for _, t := range []struct {
		name string
		v    int
	}{{"heavy_pow", b.HeavyPoW}, {"captcha", b.Captcha}, {"shadow", b.Shadow}, {"block", b.Block}} {
		switch {
		case t.v < 0 || t.v > 100:
			v.fail(p+".bands."+t.name, "must be 0 (off) or a score from 1 to 100 (got %d)", t.v)
		case t.v == 0:
		case t.v <= last:
			v.fail(p+".bands."+t.name, "must be above bands.%s (%d): bands rise with the score", lastName, last)
		default:
			last, lastName = t.v, t.name
		}
	}
	v.work(p+".light", ch.Light)
	v.work(p+".heavy", ch.Heavy)
	if ch.Light.Bits > 0 && ch.Heavy.Bits > 0 && uint64(ch.Heavy.Puzzles)<<ch.Heavy.Bits < uint64(ch.Light.Puzzles)<<ch.Light.Bits {
		v.fail(p+".heavy", "must be at least as much work as light")
	}
	if ch.Captcha != "" {
		if _, ok := captcha[ch.Captcha]; !ok {
			v.fail(p+".captcha", "names no bot_defence.captcha provider (got %q)", ch.Captcha)
		}
	} else if ch.NoJSCaptcha {
		v.fail(p+".nojs_captcha", "needs captcha: the provider offered instead of the proof of work")
	}
}

func (v *validator) work(p string, w Work) {
	v.between(p+".bits", int64(w.Bits), 1, 32)
	v.between(p+".puzzles", int64(w.Puzzles), 1, 64)
}
