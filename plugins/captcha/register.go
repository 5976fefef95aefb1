package captcha

import (
	"context"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

func init() {
	for _, kind := range []string{Turnstile, HCaptcha, ReCAPTCHA} {
		plugins.Captcha.Register(kind, plugins.Configured[Config, challenge.Provider]{
			Check: func(c Config) error { return c.Validate(kind) },
			New: func(_ context.Context, c Config, env plugins.Env) (challenge.Provider, error) {
				return New(kind, c, env)
			},
		})
	}
}
