package signals

import (
	"context"
	"fmt"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

// MaxToolUserAgentLength bounds a headers.tool_user_agents entry.
const MaxToolUserAgentLength = 200

// HeadersConfig is the section of the headers signal: whether the request
// headers are those of the browser the User-Agent claims (see
// challenge.HeaderSignal).
type HeadersConfig struct {
	// More case-insensitive User-Agent substrings that mark automation
	// tools, besides the built-in list (curl/, python-requests,
	// Go-http-client, okhttp, HeadlessChrome, …).
	ToolUserAgents []string `yaml:"tool_user_agents"`
	// Visitors reach waitroom over plain http:// (not localhost): browsers
	// then send neither client hints nor Sec-Fetch-* headers, so their
	// absence is not held against them.
	PlainHTTP bool `yaml:"plain_http"`
	// Skip the header-order and "Connection: close" checks. Set it when a
	// proxy in front of waitroom rewrites headers (nginx proxy_pass puts
	// Host first and sends Connection: close of its own).
	IgnoreOrder bool `yaml:"ignore_order"`
}

// DefaultHeadersConfig is the headers section when it is left out: every
// check on, no extra tools.
func DefaultHeadersConfig() HeadersConfig { return HeadersConfig{} }

// Validate checks c: every tool substring non-empty, printable and at most
// MaxToolUserAgentLength bytes.
func (c HeadersConfig) Validate() error {
	var p problems
	for i, t := range c.ToolUserAgents {
		path := fmt.Sprintf("tool_user_agents[%d]", i)
		switch {
		case t == "":
			p.fail(path, "must not be empty")
		case len(t) > MaxToolUserAgentLength:
			p.fail(path, "must be at most %d bytes (got %d)", MaxToolUserAgentLength, len(t))
		case hasControl(t):
			p.fail(path, "must not contain control characters")
		}
	}
	return p.err()
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

func buildHeaders(_ context.Context, c HeadersConfig, _ plugins.Env) (challenge.Signal, error) {
	return challenge.NewHeaderSignal(challenge.HeaderOptions{
		ExtraTools:  c.ToolUserAgents,
		PlainHTTP:   c.PlainHTTP,
		IgnoreOrder: c.IgnoreOrder,
	})
}
