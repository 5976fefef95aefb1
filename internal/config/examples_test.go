package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// exampleEnv gives the variables the example configs reference a dummy
// value that passes validation.
func exampleEnv(name string) (string, bool) {
	switch name {
	case "REDIS_URL":
		return "redis://127.0.0.1:6379/0", true
	}
	return "dummy-" + strings.ToLower(name) + "-0123456789", true
}

// TestExamples checks that every configs/*.yaml parses and validates with
// its variables set to dummies.
func TestExamples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example configs found: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Parse(data, exampleEnv)
			if err != nil {
				t.Fatalf("%s does not parse:\n%v", file, InFile(file, err))
			}
			if err := Validate(c); err != nil {
				t.Fatalf("%s is not valid:\n%v", file, InFile(file, err))
			}
		})
	}
}

// secretKeys are keys whose values must come from the environment in an
// example: a reader copies examples, secrets and all.
var secretKeys = map[string]bool{"api_token": true, "password": true}

var envOnly = regexp.MustCompile(`^\$\{[A-Z][A-Z0-9_]*(:-)?\}$`)

// TestExamplesKeepSecretsOut checks that no example writes a secret
// inline, in a key or inside a URL.
func TestExamplesKeepSecretsOut(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../configs/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		var walk func(n *yaml.Node)
		walk = func(n *yaml.Node) {
			for i, c := range n.Content {
				if n.Kind == yaml.MappingNode && i%2 == 1 {
					key := n.Content[i-1].Value
					if secretKeys[key] && c.Kind == yaml.ScalarNode && !envOnly.MatchString(c.Value) {
						t.Errorf("%s:%d: %s must be a ${VARIABLE} reference, not %q", file, c.Line, key, c.Value)
					}
					if key == "url" && strings.Contains(c.Value, "@") {
						t.Errorf("%s:%d: a url must not carry credentials", file, c.Line)
					}
				}
				walk(c)
			}
		}
		walk(&doc)
	}
}
