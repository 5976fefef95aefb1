package builtin

// The built-in plugins, each registering itself from its init function.
import (
	// CAPTCHA providers: turnstile, hcaptcha, recaptcha.
	_ "github.com/waitroom/waitroom/plugins/captcha"
	// External scorer: http.
	_ "github.com/waitroom/waitroom/plugins/scorer"
	_ "github.com/waitroom/waitroom/plugins/signals"
	// Event sink: webhook.
	_ "github.com/waitroom/waitroom/plugins/webhook"
)
