package builtin_test

import (
	"slices"
	"testing"

	"github.com/waitroom/waitroom/plugins"
	_ "github.com/waitroom/waitroom/plugins/builtin"
)

func TestRegistered(t *testing.T) {
	if got, want := plugins.Captcha.Names(), []string{"hcaptcha", "recaptcha", "turnstile"}; !slices.Equal(got, want) {
		t.Errorf("plugins.Captcha.Names() = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		point string
		names []string
		want  string
	}{
		{"sink", plugins.Sinks.Names(), "webhook"},
		{"scorer", plugins.Scorers.Names(), "http"},
	} {
		if !slices.Contains(tc.names, tc.want) {
			t.Errorf("%s plugins %q lack %q", tc.point, tc.names, tc.want)
		}
	}
}
