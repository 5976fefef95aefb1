package scorer

import (
	"context"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

func init() {
	plugins.Scorers.Register("http", plugins.Configured[Config, challenge.Signal]{
		Check: func(c Config) error { return c.Validate() },
		New: func(_ context.Context, c Config, env plugins.Env) (challenge.Signal, error) {
			return New(c, env)
		},
	})
}
