package webhook

import (
	"context"

	"github.com/waitroom/waitroom/plugins"
)

// The sink's workers outlive Build's ctx and stop at Close.
func init() {
	plugins.Sinks.Register("webhook", plugins.Configured[Config, plugins.Sink]{
		Check: func(c Config) error { return c.Validate() },
		New: func(_ context.Context, c Config, env plugins.Env) (plugins.Sink, error) {
			return New(c, env)
		},
	})
}
