package scorer

import (
	"context"

	"gopkg.in/yaml.v3"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

func init() {
	plugins.Scorers.Register("http", factory{})
}

// factory makes http scorers from their config section.
type factory struct{}

func (factory) Validate(raw *yaml.Node) error {
	var c Config
	if err := plugins.Decode(raw, &c); err != nil {
		return err
	}
	return c.Validate()
}

func (factory) Build(_ context.Context, raw *yaml.Node, env plugins.Env) (challenge.Signal, error) {
	var c Config
	if err := plugins.Decode(raw, &c); err != nil {
		return nil, err
	}
	return New(c, env)
}

var _ plugins.Factory[challenge.Signal] = factory{}
