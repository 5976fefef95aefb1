package signals

import (
	"context"
	"errors"
	"log/slog"

	"gopkg.in/yaml.v3"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

// The plugin names.
const (
	NameHeaders  = "headers"
	NameJA4      = "ja4"
	NameIPRanges = "ip_ranges"
	NameRate     = "rate"
	NameKnownBad = "known_bad"
)

func init() { Register(plugins.Signals) }

// Register adds this package's signal factories to r. It panics if r
// already has one of their names (see plugins.Registry.Register).
func Register(r *plugins.Registry[challenge.Signal]) {
	r.Register(NameHeaders, factory[HeadersConfig]{DefaultHeadersConfig, buildHeaders})
	r.Register(NameJA4, factory[JA4Config]{DefaultJA4Config, buildJA4})
	r.Register(NameIPRanges, factory[IPRangesConfig]{DefaultIPRangesConfig, buildIPRanges})
	r.Register(NameRate, factory[RateConfig]{DefaultRateConfig, buildRate})
	r.Register(NameKnownBad, factory[KnownBadConfig]{DefaultKnownBadConfig, buildKnownBad})
}

// config is what every signal config does: check itself without side
// effects on the config (file-backed ones read their files).
type config interface {
	Validate() error
}

// factory is a plugins.Factory for a config type C: decode strictly over
// the defaults, validate, build.
type factory[C config] struct {
	defaults func() C
	build    func(ctx context.Context, c C, env plugins.Env) (challenge.Signal, error)
}

func (f factory[C]) decode(raw *yaml.Node) (C, error) {
	c := f.defaults()
	err := plugins.Decode(raw, &c)
	return c, err
}

// Validate implements plugins.Factory.
func (f factory[C]) Validate(raw *yaml.Node) error {
	c, err := f.decode(raw)
	if err != nil {
		return err
	}
	return c.Validate()
}

// Build implements plugins.Factory.
func (f factory[C]) Build(ctx context.Context, raw *yaml.Node, env plugins.Env) (challenge.Signal, error) {
	c, err := f.decode(raw)
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	return f.build(ctx, c, env)
}

var _ plugins.Factory[challenge.Signal] = factory[HeadersConfig]{}

// problems collects field errors.
type problems []error

func (p *problems) fail(path, format string, args ...any) {
	*p = append(*p, plugins.Fail(path, format, args...))
}

func (p problems) err() error { return errors.Join(p...) }
