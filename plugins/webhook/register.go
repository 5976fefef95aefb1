package webhook

import (
	"context"

	"gopkg.in/yaml.v3"

	"github.com/waitroom/waitroom/plugins"
)

func init() {
	plugins.Sinks.Register("webhook", factory{})
}

// factory makes webhook sinks from their config section.
type factory struct{}

func (factory) Validate(raw *yaml.Node) error {
	var c Config
	if err := plugins.Decode(raw, &c); err != nil {
		return err
	}
	return c.Validate()
}

// Build starts the sink's workers; they outlive ctx and stop at Close.
func (factory) Build(_ context.Context, raw *yaml.Node, env plugins.Env) (plugins.Sink, error) {
	var c Config
	if err := plugins.Decode(raw, &c); err != nil {
		return nil, err
	}
	return New(c, env)
}

var _ plugins.Factory[plugins.Sink] = factory{}
