package signals

import (
	"context"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
)

// Defaults of the ja4 section.
const (
	// DefaultJA4UnknownSuspicion is 0: without a list of good
	// fingerprints covering the browsers visitors use, "unknown" is every
	// visitor, and new browser releases change fingerprints.
	DefaultJA4UnknownSuspicion = 0.0
	// DefaultJA4BadSuspicion is a bad entry's suspicion when it gives
	// none: certainly a tool.
	DefaultJA4BadSuspicion = 1.0
)

// JA4Config is the section of the ja4 signal: the TLS client fingerprint
// against lists of known ones (see challenge.JA4Signal). Fingerprints are
// full JA4 strings such as t13d1516h2_8daaf6152771_e5627efa2ab1 (ja4db.com
// lists many). The shipped fingerprint data (challenge/fingerprints.json:
// Go, Python, curl, Node and Java as tools, Chromium as a browser) is the
// default list; bad and good add to it and win over it.
type JA4Config struct {
	// Fingerprints of automation tools: each a fingerprint alone
	// (suspicion 1) or a mapping {fingerprint, suspicion}.
	Bad []JA4BadEntry `yaml:"bad"`
	// Fingerprints of real browsers: suspicion 0.
	Good []string `yaml:"good"`
	// Use the shipped fingerprint data (default true): its tools are bad
	// (suspicion 1), its browsers good.
	Builtin bool `yaml:"builtin"`
	// A fingerprint data file of your own, in the shipped file's JSON
	// format ({"fingerprints": [{"client", "kind": "tool"|"browser",
	// "family", "ja4", "headers"}]}), read with the shipped data.
	File string `yaml:"file"`
	// Suspicion, 0 to 1, of a fingerprint on neither list. Requests
	// without a fingerprint (waitroom did not see the TLS handshake) are
	// never judged.
	UnknownSuspicion float64 `yaml:"unknown_suspicion"`
}

// JA4BadEntry is one known-bad fingerprint. In YAML it is the fingerprint
// alone or a mapping.
type JA4BadEntry struct {
	// The JA4 fingerprint.
	Fingerprint string `yaml:"fingerprint"`
	// Its suspicion, 0 to 1; left out: DefaultJA4BadSuspicion.
	Suspicion *float64 `yaml:"suspicion"`
}

// UnmarshalYAML reads a fingerprint alone or a mapping with only the keys
// fingerprint and suspicion.
func (e *JA4BadEntry) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*e = JA4BadEntry{Fingerprint: n.Value}
		return nil
	}
	if n.Kind == yaml.MappingNode {
		// A nested Decode does not inherit the strict decoder's
		// KnownFields, so check the keys here.
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; k != "fingerprint" && k != "suspicion" {
				return fmt.Errorf("line %d: field %s not found in a ja4 bad entry (want fingerprint, suspicion)", n.Content[i].Line, k)
			}
		}
	}
	type plain JA4BadEntry
	return n.Decode((*plain)(e))
}

func (e JA4BadEntry) suspicion() float64 {
	if e.Suspicion == nil {
		return DefaultJA4BadSuspicion
	}
	return *e.Suspicion
}

// DefaultJA4Config is the ja4 section when it is left out: the shipped
// fingerprint data and no lists of its own.
func DefaultJA4Config() JA4Config {
	return JA4Config{UnknownSuspicion: DefaultJA4UnknownSuspicion, Builtin: true}
}

const ja4Example = "t13d1516h2_8daaf6152771_e5627efa2ab1"

// Validate checks c: fingerprints well-formed and listed once, suspicions
// 0 to 1, the file readable and valid.
func (c JA4Config) Validate() error {
	var p problems
	seen := map[string]string{}
	see := func(path, fp string) {
		if !challenge.ValidJA4(fp) {
			p.fail(path, "must be a JA4 fingerprint such as %s (got %q)", ja4Example, fp)
			return
		}
		if first, dup := seen[fp]; dup {
			p.fail(path, "repeats %s", first)
			return
		}
		seen[fp] = path
	}
	for i, e := range c.Bad {
		see(fmt.Sprintf("bad[%d].fingerprint", i), e.Fingerprint)
		if s := e.suspicion(); !(s >= 0 && s <= 1) {
			p.fail(fmt.Sprintf("bad[%d].suspicion", i), "must be 0 to 1 (got %v)", s)
		}
	}
	for i, fp := range c.Good {
		see(fmt.Sprintf("good[%d]", i), fp)
	}
	if s := c.UnknownSuspicion; !(s >= 0 && s <= 1) {
		p.fail("unknown_suspicion", "must be 0 to 1 (got %v)", s)
	}
	if _, err := fingerprints(false, c.File); err != nil {
		p = append(p, err)
	}
	return p.err()
}

func buildJA4(_ context.Context, c JA4Config, _ plugins.Env) (challenge.Signal, error) {
	data, err := fingerprints(c.Builtin, c.File)
	if err != nil {
		return nil, err
	}
	o := challenge.JA4Options{Good: c.Good, Unknown: c.UnknownSuspicion, Data: data}
	for _, e := range c.Bad {
		o.Bad = append(o.Bad, challenge.JA4Entry{Fingerprint: e.Fingerprint, Suspicion: e.suspicion()})
	}
	return challenge.NewJA4Signal(o)
}
