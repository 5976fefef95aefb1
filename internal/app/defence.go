package app

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/challenge/memstore"
	"github.com/waitroom/waitroom/challenge/redisstore"
	"github.com/waitroom/waitroom/internal/config"
	"github.com/waitroom/waitroom/plugins"
	_ "github.com/waitroom/waitroom/plugins/builtin" // the built-in plugins
	"github.com/waitroom/waitroom/proxy"
)

// defence builds the bot defence the configuration asks for: nil when no
// event has a challenge. It fills in the per-event challenges of o.
func (w *Waitroom) defence(ctx context.Context, o *proxy.Options) error {
	d := &w.cfg.BotDefence
	if !w.cfg.ChallengesOn() {
		return nil
	}
	guard, err := w.replayGuard(d.ChallengeTTL.Std())
	if err != nil {
		return err
	}
	pow, err := challenge.NewPoW([]byte(d.Secret), guard)
	if err != nil {
		return err
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
			return fmt.Errorf("bot_defence.signals[%d] (%s): %w", i, s.Type, err)
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
			return fmt.Errorf("bot_defence.scorer (%s): %w", s.Type, err)
		}
		weighted = append(weighted, challenge.WeightedSignal{Name: "scorer:" + s.Type, Weight: s.Weight, Signal: sig, Slow: true})
	}
	providers := map[string]challenge.Provider{}
	for i, c := range d.Captcha {
		p, err := plugins.Captcha.Build(ctx, c.Type, &c.Config, env)
		if err != nil {
			return fmt.Errorf("bot_defence.captcha[%d] (%s): %w", i, c.Name, err)
		}
		providers[c.Name] = p
	}
	scorer, err := challenge.NewScorer(weighted, challenge.ScorerOptions{Log: w.log})
	if err != nil {
		return fmt.Errorf("bot_defence.signals: %w", err)
	}
	shadow := sha256.Sum256([]byte("waitroom/shadow-key\x00" + d.Secret))
	o.Defence = &proxy.Defence{PoW: pow, Scorer: scorer, TTL: d.ChallengeTTL.Std(),
		ShadowKey: shadow[:], JA4Header: d.JA4Header}
	if w.cfg.Serve.TLS.Listen != "" {
		o.Defence.Fingerprints = &proxy.Fingerprints{}
		w.fingerprints = o.Defence.Fingerprints
	}
	for i, e := range w.cfg.Events {
		c := e.Challenge
		if c.Mode == config.ChallengeOff {
			continue
		}
		ec := &proxy.EventChallenge{
			Policy: challenge.Policy{DryRun: c.Mode == config.ChallengeDryRun, Bands: challenge.Bands{
				HeavyPoW: c.Bands.HeavyPoW, Captcha: c.Bands.Captcha, Shadow: c.Bands.Shadow, Block: c.Bands.Block}},
			Light:       proxy.Work{Bits: uint8(c.Light.Bits), Puzzles: uint8(c.Light.Puzzles)},
			Heavy:       proxy.Work{Bits: uint8(c.Heavy.Bits), Puzzles: uint8(c.Heavy.Puzzles)},
			Captcha:     providers[c.Captcha],
			NoJSCaptcha: c.NoJSCaptcha,
		}
		o.Events[i].Challenge = ec
	}
	return nil
}

// replayGuard opens the guard that makes each challenge redeemable once:
// in this process with the embedded admission store, in Redis (shared by
// every replica) with the Redis one.
func (w *Waitroom) replayGuard(ttl time.Duration) (challenge.ReplayGuard, error) {
	a := w.cfg.Admission
	if a.Store == config.StoreRedis {
		c, err := redisClient(a.Redis)
		if err != nil {
			return nil, err
		}
		w.closers = append(w.closers, c.Close)
		g := redisstore.New(redisstore.Options{Client: c, Prefix: a.RedisPrefix + "replay:"})
		w.closers = append(w.closers, g.Close)
		return g, nil
	}
	// CAPTCHA tokens are remembered for their max_age (at most 10m) and a
	// minute more: the window covers them as well as challenges.
	g := memstore.New(memstore.Options{Window: max(ttl, 11*time.Minute)})
	w.closers = append(w.closers, g.Close)
	return g, nil
}
