package scorer

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/waitroom/waitroom/internal/secretcheck"
	"github.com/waitroom/waitroom/plugins"
	"github.com/waitroom/waitroom/plugins/internal/httpc"
)

// Config is the http scorer's config section. A zero duration means the
// default. A Config is plain data, safe to read from several goroutines.
type Config struct {
	// The scorer's endpoint, an http or https URL (https, or http to a
	// loopback address, when bearer_token is set). Required.
	URL string `yaml:"url"`
	// How long one call may take, 10ms to 5s; default 150ms. It is spent
	// on every scored join, so keep it short.
	Timeout time.Duration `yaml:"timeout"`
	// Sent as "Authorization: Bearer <token>" when set. Take it from the
	// environment (${SCORER_TOKEN}).
	BearerToken string `yaml:"bearer_token"`
	// When set, requests carry an X-Waitroom-Signature HMAC-SHA256 of the
	// body under this key (at least 32 bytes), the same scheme as the
	// webhook sink's. Take it from the environment.
	Secret string `yaml:"secret"`
	// Request headers not sent to the scorer, by name (any case). Left
	// out: Cookie, Authorization and Proxy-Authorization, which carry
	// visitors' credentials. An empty list sends every header.
	OmitHeaders []string `yaml:"omit_headers"`
}

// Defaults of Config.
const DefaultTimeout = 150 * time.Millisecond

// DefaultOmitHeaders are the headers not sent when omit_headers is left
// out.
var DefaultOmitHeaders = []string{"Cookie", "Authorization", "Proxy-Authorization"}

// Limits Validate enforces.
const (
	MinTimeout   = 10 * time.Millisecond
	MaxTimeout   = 5 * time.Second
	MinSecretLen = 32
)

// Validate checks c. It returns nil or every problem, each a
// *plugins.FieldError, joined. It does not change c.
func (c *Config) Validate() error {
	var errs []error
	fail := func(path, format string, args ...any) {
		errs = append(errs, plugins.Fail(path, format, args...))
	}
	if msg := httpc.CheckURL(c.URL, c.BearerToken != ""); msg != "" {
		if c.BearerToken != "" {
			if u, err := url.Parse(c.URL); err == nil && u.Scheme == "http" {
				msg += ", as a bearer_token is sent"
			}
		}
		fail("url", "%s", msg)
	}
	if c.Timeout != 0 && (c.Timeout < MinTimeout || c.Timeout > MaxTimeout) {
		fail("timeout", "must be %s to %s", MinTimeout, MaxTimeout)
	}
	switch {
	case strings.Contains(c.BearerToken, "${"):
		fail("bearer_token", "contains an unexpanded ${...} reference")
	case !headerSafe(c.BearerToken):
		fail("bearer_token", "must be printable ASCII without spaces")
	}
	switch {
	case c.Secret == "":
	case strings.Contains(c.Secret, "${"):
		fail("secret", "contains an unexpanded ${...} reference")
	case len(c.Secret) < MinSecretLen:
		fail("secret", "must be at least %d bytes (openssl rand -hex 32 makes one)", MinSecretLen)
	default:
		if why := secretcheck.Weak(c.Secret, MinSecretLen); why != "" {
			fail("secret", "%s: it signs the requests, so it must not be guessable; %s", why, secretcheck.Hint)
		}
	}
	for i, h := range c.OmitHeaders {
		if h == "" || !headerSafe(h) || strings.ContainsRune(h, ':') {
			fail(fmt.Sprintf("omit_headers[%d]", i), "%q is not a header name", h)
		}
	}
	return errors.Join(errs...)
}

func headerSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}
