package signals

import (
	"context"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

// ConsistencyConfig is the section of the consistency signal: whether a
// User-Agent that claims a browser comes with that browser's TLS
// fingerprint and headers (see challenge.ConsistencySignal). It reads the
// same fingerprint data as the ja4 signal.
type ConsistencyConfig struct {
	// Use the shipped fingerprint data (default true).
	Builtin bool `yaml:"builtin"`
	// A fingerprint data file of your own, in the shipped file's JSON
	// format, read with the shipped data: add the JA4 of the browsers your
	// visitors use (Firefox, Safari) as {"kind": "browser", "family":
	// "firefox"|"webkit"|"chromium"}, and tools you see.
	File string `yaml:"file"`
}

// DefaultConsistencyConfig is the consistency section when it is left
// out: the shipped data alone.
func DefaultConsistencyConfig() ConsistencyConfig { return ConsistencyConfig{Builtin: true} }

// Validate checks c: the file readable and valid.
func (c ConsistencyConfig) Validate() error {
	_, err := fingerprints(false, c.File)
	return err
}

func buildConsistency(_ context.Context, c ConsistencyConfig, _ plugins.Env) (challenge.Signal, error) {
	data, err := fingerprints(c.Builtin, c.File)
	if err != nil {
		return nil, err
	}
	return challenge.NewConsistencySignal(challenge.ConsistencyOptions{Data: data})
}
