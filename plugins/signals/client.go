package signals

import (
	"context"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

// ClientConfig is the section of the client signal: what the
// waiting-room page reports of the browser it runs in, sent with the join
// (navigator.webdriver, automation artefacts, missing APIs, the solve's
// speed; see challenge.ClientSignal). It has no settings: a missing
// report counts nothing, so weigh it modestly.
type ClientConfig struct{}

// DefaultClientConfig is the client section.
func DefaultClientConfig() ClientConfig { return ClientConfig{} }

// Validate checks c: there is nothing to check.
func (ClientConfig) Validate() error { return nil }

func buildClient(context.Context, ClientConfig, plugins.Env) (challenge.Signal, error) {
	return challenge.ClientSignal{}, nil
}
