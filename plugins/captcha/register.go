package captcha

import (
	"context"

	"gopkg.in/yaml.v3"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

func init() {
	for _, kind := range []string{Turnstile, HCaptcha, ReCAPTCHA} {
		plugins.Captcha.Register(kind, factory{kind: kind})
	}
}

// factory makes providers of one kind from their config section.
type factory struct{ kind string }

func (f factory) Validate(raw *yaml.Node) error {
	var c Config
	if err := plugins.Decode(raw, &c); err != nil {
		return err
	}
	return c.Validate(f.kind)
}

func (f factory) Build(_ context.Context, raw *yaml.Node, env plugins.Env) (challenge.Provider, error) {
	var c Config
	if err := plugins.Decode(raw, &c); err != nil {
		return nil, err
	}
	return New(f.kind, c, env)
}

var _ plugins.Factory[challenge.Provider] = factory{}
