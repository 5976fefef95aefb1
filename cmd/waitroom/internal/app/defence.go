package app

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/plugins"
	_ "github.com/waitroom/waitroom/plugins/builtin" // the built-in plugins
	"github.com/waitroom/waitroom/proxy"
)

// defence is the bot defence the configuration asks for, built before
// the pages (whose policy must allow the CAPTCHA widgets) and wired into
// the proxy's options after them.
type defence struct {
	proxy *proxy.Defence
	// captcha are the providers by bot_defence.captcha[].name.
	captcha map[string]challenge.Provider
}

// defence builds the bot defence: nil when no event has a challenge.
func (w *Waitroom) defence(ctx context.Context) (*defence, error) {
	return w.defenceFor(ctx, w.cfg)
}

// defenceFor builds cfg's bot defence (at the start, or for a reload).
// The replay guard and the TLS fingerprints are made once and kept: a
// reload must not forget which challenges were redeemed.
func (w *Waitroom) defenceFor(ctx context.Context, cfg *config.Config) (*defence, error) {
	d := &cfg.BotDefence
	if !cfg.ChallengesOn() {
		return nil, nil
	}
	if w.replay == nil {
		guard, err := w.replayGuard(ctx, d.ChallengeTTL.Std())
		if err != nil {
			return nil, err
		}
		w.replay = guard
	}
	guard := w.replay
	pow, err := challenge.NewPoW([]byte(d.Secret), guard)
	if err != nil {
		return nil, err
	}
	env := plugins.Env{Log: w.log, Replay: guard}
	var weighted []challenge.WeightedSignal
	signals := d.Signals
	if signals == nil {
		signals = config.DefaultSignals()
	}
	count := map[string]int{}
	for i, s := range signals {
		sig, err := plugins.Signals.Build(ctx, s.Type, &s.Config, env)
		if err != nil {
			return nil, fmt.Errorf("bot_defence.signals[%d] (%s): %w", i, s.Type, err)
		}
		name := s.Type
		if count[s.Type]++; count[s.Type] > 1 {
			name = fmt.Sprintf("%s#%d", s.Type, i) // two lists of one kind
		}
		weighted = append(weighted, challenge.WeightedSignal{Name: name, Weight: s.Weight, Signal: sig})
	}
	if s := d.Scorer; s != nil {
		sig, err := plugins.Scorers.Build(ctx, s.Type, &s.Config, env)
		if err != nil {
			return nil, fmt.Errorf("bot_defence.scorer (%s): %w", s.Type, err)
		}
		weighted = append(weighted, challenge.WeightedSignal{Name: "scorer:" + s.Type, Weight: s.Weight, Signal: sig, Slow: true})
	}
	providers := map[string]challenge.Provider{}
	for i, c := range d.Captcha {
		p, err := plugins.Captcha.Build(ctx, c.Type, &c.Config, env)
		if err != nil {
			return nil, fmt.Errorf("bot_defence.captcha[%d] (%s): %w", i, c.Name, err)
		}
		providers[c.Name] = p
	}
	scorer, err := challenge.NewScorer(weighted, challenge.ScorerOptions{Log: w.log})
	if err != nil {
		return nil, fmt.Errorf("bot_defence.signals: %w", err)
	}
	pd := &proxy.Defence{PoW: pow, Scorer: scorer, TTL: d.ChallengeTTL.Std(), JA4Header: d.JA4Header,
		SuspectMemory: d.SuspectMemory.Std()}
	if cfg.Serve.TLS.Listen != "" {
		if w.fingerprints == nil {
			w.fingerprints = &proxy.Fingerprints{}
		}
		pd.Fingerprints = w.fingerprints
	}
	return &defence{proxy: pd, captcha: providers}, nil
}

// shadowKey is the admission engine's shadow key, derived from the bot
// defence's secret (the same on every replica): nil when no event has a
// challenge, so nobody can be shadowed.
func shadowKey(cfg *config.Config) []byte {
	if !cfg.ChallengesOn() {
		return nil
	}
	key := sha256.Sum256([]byte("waitroom/shadow-key\x00" + cfg.BotDefence.Secret))
	return key[:]
}

// eventCaptcha returns the CAPTCHA provider of event e: nil when its
// challenge is off or names none. A nil d has none.
func (d *defence) eventCaptcha(e *config.Event) challenge.Provider {
	if d == nil || e.Challenge.Mode == config.ChallengeOff {
		return nil
	}
	return d.captcha[e.Challenge.Captcha]
}

// apply puts the bot defence into o, whose Events are the configured
// events in order: the shared defence and each event's challenge. A nil d
// leaves o alone.
func (d *defence) apply(cfg *config.Config, o *proxy.Options) {
	if d == nil {
		return
	}
	o.Defence = d.proxy
	for i := range cfg.Events {
		e := &cfg.Events[i]
		c := e.Challenge
		if c.Mode == config.ChallengeOff {
			continue
		}
		o.Events[i].Challenge = &proxy.EventChallenge{
			Policy: challenge.Policy{DryRun: c.Mode == config.ChallengeDryRun, Bands: challenge.Bands{
				HeavyPoW: c.Bands.HeavyPoW, Captcha: c.Bands.Captcha, Shadow: c.Bands.Shadow, Block: c.Bands.Block}},
			Light:       proxy.Work{Bits: uint8(c.Light.Bits), Puzzles: uint8(c.Light.Puzzles)},
			Heavy:       proxy.Work{Bits: uint8(c.Heavy.Bits), Puzzles: uint8(c.Heavy.Puzzles)},
			Captcha:     d.eventCaptcha(e),
			NoJSCaptcha: c.NoJSCaptcha,
		}
	}
}

// replayGuard opens the guard that makes each challenge redeemable once,
// by the backend registered under the admission store's name: in this
// process with the embedded admission store, in Redis (shared by every
// replica, through the admission store's client) with the Redis one.
func (w *Waitroom) replayGuard(ctx context.Context, ttl time.Duration) (challenge.ReplayGuard, error) {
	a := w.cfg.Admission
	f, ok := challenge.ReplayStores.Lookup(string(a.Store))
	if !ok {
		return nil, noBackend("admission.store", string(a.Store), challenge.ReplayStores.Names())
	}
	// CAPTCHA tokens are remembered for their max_age (at most 10m) and a
	// minute more: the window covers them as well as challenges.
	g, err := f.Build(ctx, challenge.ReplayStoreConfig{Redis: w.admissionRedis, RedisPrefix: a.ReplayPrefix(),
		Window: max(ttl, 11*time.Minute)})
	if err != nil {
		return nil, settingErr("admission", err)
	}
	w.closers = append(w.closers, g.Close)
	return g, nil
}
