package webhook

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/waitroom/waitroom/internal/secretcheck"
	"github.com/waitroom/waitroom/plugins"
	"github.com/waitroom/waitroom/plugins/internal/httpc"
	"github.com/waitroom/waitroom/plugins/internal/signature"
)

// Config is the webhook sink's config section. A zero duration or number
// means the default. A Config is plain data, safe to read from several
// goroutines.
type Config struct {
	// Where events are POSTed: an http or https URL. Required.
	URL string `yaml:"url"`
	// Key of the HMAC-SHA256 signatures, shared with the receiver: either
	// whsec_ and the base64 of 24 to 64 random bytes (the Standard
	// Webhooks form; echo whsec_$(openssl rand -base64 32) makes one), or
	// a plain string of at least 32 bytes used as the key as it is (give
	// a Standard Webhooks library "whsec_" + its base64). Required; take
	// it from the environment (${WAITROOM_WEBHOOK_SECRET}).
	Secret string `yaml:"secret"`
	// How long one delivery attempt may take, 100ms to 1m; default 5s.
	Timeout time.Duration `yaml:"timeout"`
	// Attempts per event, the first included, 1 to 20; default 5.
	MaxAttempts int `yaml:"max_attempts"`
	// Wait before the first retry, 10ms to 1m; default 1s. Each further
	// retry waits twice as long (with jitter), up to max_backoff.
	Backoff time.Duration `yaml:"backoff"`
	// Longest wait between attempts, including one a Retry-After header
	// asks for, from backoff to 1h; default 1m.
	MaxBackoff time.Duration `yaml:"max_backoff"`
	// Events waiting for delivery, 1 to 1000000; default 10000. When the
	// queue is full, new events are dropped and counted.
	QueueSize int `yaml:"queue_size"`
	// Deliveries in flight at once, 1 to 64; default 2.
	Workers int `yaml:"workers"`
	// Kinds of event sent: joined, admitted, no_show, hold, sold,
	// released, sold_out, paused, resumed, mode_changed. Left out: all
	// of them.
	Kinds []string `yaml:"kinds"`
}

// Defaults of Config.
const (
	DefaultTimeout     = 5 * time.Second
	DefaultMaxAttempts = 5
	DefaultBackoff     = time.Second
	DefaultMaxBackoff  = time.Minute
	DefaultQueueSize   = 10_000
	DefaultWorkers     = 2
)

// Limits Validate enforces.
const (
	MinSecretLen      = 32
	MinTimeout        = 100 * time.Millisecond
	MaxTimeout        = time.Minute
	MaxMaxAttempts    = 20
	MinBackoff        = 10 * time.Millisecond
	MaxInitialBackoff = time.Minute
	MaxMaxBackoff     = time.Hour
	MaxQueueSize      = 1_000_000
	MaxWorkers        = 64
)

// Kinds lists the event kinds a sink can be sent. Read-only.
var Kinds = plugins.AllKinds

// Validate checks c. It returns nil or every problem, each a
// *plugins.FieldError, joined. It does not change c.
func (c *Config) Validate() error {
	var errs []error
	fail := func(path, format string, args ...any) {
		errs = append(errs, plugins.Fail(path, format, args...))
	}
	if msg := httpc.CheckURL(c.URL, false); msg != "" {
		fail("url", "%s", msg)
	}
	switch {
	case c.Secret == "":
		fail("secret", "required (take it from the environment: ${...})")
	case strings.Contains(c.Secret, "${"):
		fail("secret", "contains an unexpanded ${...} reference")
	case strings.HasPrefix(c.Secret, signature.SecretPrefix):
		if _, err := signature.Key(c.Secret); err != nil {
			fail("secret", "must be whsec_ and the base64 of %d to %d random bytes (echo whsec_$(openssl rand -base64 32) makes one)",
				signature.MinStandardKey, signature.MaxStandardKey)
		} else if why := secretcheck.Weak(strings.TrimPrefix(c.Secret, signature.SecretPrefix), 32); why != "" {
			fail("secret", "its base64 %s: it signs the deliveries, so it must not be guessable; echo whsec_$(openssl rand -base64 32) makes one", why)
		}
	case len(c.Secret) < MinSecretLen:
		fail("secret", "must be at least %d bytes (openssl rand -hex 32 makes one)", MinSecretLen)
	default:
		if why := secretcheck.Weak(c.Secret, MinSecretLen); why != "" {
			fail("secret", "%s: it signs the deliveries, so it must not be guessable; %s", why, secretcheck.Hint)
		}
	}
	if c.Timeout != 0 && (c.Timeout < MinTimeout || c.Timeout > MaxTimeout) {
		fail("timeout", "must be %s to %s", MinTimeout, MaxTimeout)
	}
	if c.MaxAttempts < 0 || c.MaxAttempts > MaxMaxAttempts {
		fail("max_attempts", "must be 1 to %d", MaxMaxAttempts)
	}
	if c.Backoff != 0 && (c.Backoff < MinBackoff || c.Backoff > MaxInitialBackoff) {
		fail("backoff", "must be %s to %s", MinBackoff, MaxInitialBackoff)
	}
	backoff := c.Backoff
	if backoff == 0 {
		backoff = DefaultBackoff
	}
	if c.MaxBackoff != 0 && (c.MaxBackoff < backoff || c.MaxBackoff > MaxMaxBackoff) {
		fail("max_backoff", "must be from backoff (%s) to %s", backoff, MaxMaxBackoff)
	}
	if c.QueueSize < 0 || c.QueueSize > MaxQueueSize {
		fail("queue_size", "must be 1 to %d", MaxQueueSize)
	}
	if c.Workers < 0 || c.Workers > MaxWorkers {
		fail("workers", "must be 1 to %d", MaxWorkers)
	}
	seen := map[string]bool{}
	for i, k := range c.Kinds {
		path := fmt.Sprintf("kinds[%d]", i)
		switch {
		case !slices.Contains(Kinds, k):
			fail(path, "unknown event kind %q (known: %s)", k, strings.Join(Kinds, ", "))
		case seen[k]:
			fail(path, "%q listed twice", k)
		}
		seen[k] = true
	}
	return errors.Join(errs...)
}

// resolved returns c with every default applied; c must be valid.
func (c Config) resolved() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Backoff == 0 {
		c.Backoff = DefaultBackoff
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = max(DefaultMaxBackoff, c.Backoff)
	}
	if c.QueueSize == 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	return c
}
