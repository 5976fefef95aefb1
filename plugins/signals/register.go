package signals

import (
	"context"
	"errors"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

// The plugin names.
const (
	NameHeaders     = "headers"
	NameJA4         = "ja4"
	NameIPRanges    = "ip_ranges"
	NameRate        = "rate"
	NameKnownBad    = "known_bad"
	NameConsistency = "consistency"
	NameClient      = "client"
)

func init() { Register(plugins.Signals) }

// Register adds this package's signal factories to r. It panics if r
// already has one of their names (see plugins.Registry.Register).
func Register(r *plugins.Registry[challenge.Signal]) {
	r.Register(NameHeaders, configured(DefaultHeadersConfig, buildHeaders))
	r.Register(NameJA4, configured(DefaultJA4Config, buildJA4))
	r.Register(NameIPRanges, configured(DefaultIPRangesConfig, buildIPRanges))
	r.Register(NameRate, configured(DefaultRateConfig, buildRate))
	r.Register(NameKnownBad, configured(DefaultKnownBadConfig, buildKnownBad))
	r.Register(NameConsistency, configured(DefaultConsistencyConfig, buildConsistency))
	r.Register(NameClient, configured(DefaultClientConfig, buildClient))
}

// configured is the factory of a signal whose config type C checks
// itself.
func configured[C interface{ Validate() error }](defaults func() C,
	build func(context.Context, C, plugins.Env) (challenge.Signal, error)) plugins.Configured[C, challenge.Signal] {
	return plugins.Configured[C, challenge.Signal]{Defaults: defaults, Check: C.Validate, New: build}
}

// problems collects field errors.
type problems []error

func (p *problems) fail(path, format string, args ...any) {
	*p = append(*p, plugins.Fail(path, format, args...))
}

func (p problems) err() error { return errors.Join(p...) }
