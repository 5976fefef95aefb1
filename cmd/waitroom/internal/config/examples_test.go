package config

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/configs"
)

// exampleEnv gives the variables the example configs reference a dummy
// value that passes validation: secrets and tokens get a long dummy, the
// few required plain values a sensible one. Every other variable is unset,
// so a ${NAME:-default} takes its default, and a ${NAME} without one fails
// the test: an example must not need a variable the test does not know.
func exampleEnv(name string) (string, bool) {
	switch {
	case name == "REDIS_URL":
		return "redis://127.0.0.1:6379/0", true
	case name == "WAITROOM_DEMO_DATA":
		return "/tmp/waitroom-demo", true
	case strings.HasSuffix(name, "_SECRET"), strings.HasSuffix(name, "_TOKEN"), strings.HasSuffix(name, "_PASSWORD"),
		strings.HasSuffix(name, "_SITE_KEY"):
		return "dummy-" + strings.ToLower(name) + "-0123456789abcdef0123456789", true
	}
	return "", false
}

// exampleRoles is the command each example is written for.
var exampleRoles = map[string]Role{
	"demo.yaml":                    RoleProxy,
	"minimal.yaml":                 RoleProxy,
	"single-node.yaml":             RoleProxy,
	"redis.yaml":                   RoleProxy,
	"redis-cluster.yaml":           RoleProxy,
	"inventory.yaml":               RoleSidecar,
	"inventory-redis.yaml":         RoleSidecar,
	"inventory-redis-cluster.yaml": RoleSidecar,
}

// foreignConfigs are configs/*.yaml files for other servers (proxy
// package tests hold them to the requests waitroom answers).
var foreignConfigs = map[string]bool{
	"traefik-forward-auth.yaml": true,
	"envoy-ext-authz.yaml":      true,
}

// TestExamples checks that every configs/*.yaml parses and validates with
// its variables set to dummies, both as check-config sees it and for the
// command it is written for.
func TestExamples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../../../configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example configs found: %v", err)
	}
	for _, file := range files {
		if foreignConfigs[filepath.Base(file)] {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			roles, ok := exampleRoles[filepath.Base(file)]
			if !ok {
				t.Fatalf("%s is not in exampleRoles: say which command it is for", file)
			}
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
			if err := ValidateFor(c, roles); err != nil {
				t.Fatalf("%s is not valid for its command:\n%v", file, InFile(file, err))
			}
			if c.Roles()&roles != roles {
				t.Errorf("%s configures roles %b, want at least %b", file, c.Roles(), roles)
			}
			for i := range c.Events {
				if _, _, _, err := c.Events[i].Schedule(time.Now()); err != nil {
					t.Errorf("%s: %v", file, err)
				}
			}
		})
	}
}

// TestDemoExample checks what waitroom demo relies on: the embedded copy
// is the file, and it runs the flow the demo promises.
func TestDemoExample(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../../../configs/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(configs.Demo, data) {
		t.Fatal("configs.Demo differs from configs/demo.yaml")
	}
	env := map[string]string{
		"WAITROOM_DEMO_DATA":            "/tmp/demo-data",
		"WAITROOM_DEMO_LISTEN":          "127.0.0.1:18080",
		"WAITROOM_DEMO_SIGNING_SECRET":  "5b0e8c2f9a17d4e63c80b1f7a2d59e4c06b3f8a1d7e2c95b40a6f3e18d7c2b9a",
		"WAITROOM_DEMO_INVENTORY_TOKEN": "c41f0a9e7b2d58e3a6f1c0b9d4e7a2f5",
		"WAITROOM_DEMO_ADMIN_TOKEN":     "8e2b7d1f4a9c06e5b3d8f2a7c1e4b90d",
	}
	c, err := Parse(configs.Demo, lookupIn(env))
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateFor(c, RoleProxy); err != nil {
		t.Fatal(err)
	}
	eq(t, c.Serve.Listen, "127.0.0.1:18080")
	eq(t, c.Serve.WithInventory, true)
	eq(t, c.Origins[0].Addresses[0], "127.0.0.1:8081")
	eq(t, c.Inventory.Listen, "127.0.0.1:8082")
	eq(t, c.Admin.Listen, "127.0.0.1:8083")
	eq(t, c.Inventory.DataDir, "/tmp/demo-data/inventory")
	eq(t, c.Admission.DataDir, "/tmp/demo-data/admission")

	eq(t, len(c.Events), 1)
	e := &c.Events[0]
	eq(t, e.ID, "demo-concert")
	eq(t, e.Caps.MaxActive, 5)
	eq(t, e.SessionDuration, Duration(3*time.Minute))
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	opens, sale, closes, err := e.Schedule(start)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, opens, start)
	eq(t, sale, start.Add(30*time.Second))
	eq(t, closes, time.Time{})

	// Which paths are gated, by the first matching route.
	gate := func(p string) (RouteAction, string) {
		for _, r := range c.Routes {
			if r.Prefix != "" && strings.HasPrefix(p, r.Prefix) || r.Glob != "" && r.Glob == p {
				return r.EffectiveAction(), r.Event
			}
		}
		return ActionPass, ""
	}
	for _, tt := range []struct {
		path  string
		want  RouteAction
		event string
	}{
		{"/events/demo-concert", ActionQueue, "demo-concert"},
		{"/checkout/hold", ActionQueue, "demo-concert"},
		{"/", ActionPass, ""},
		{"/static/app.css", ActionPass, ""},
		{"/tickets/abc", ActionPass, ""},
		{"/healthz", ActionPass, ""},
	} {
		a, ev := gate(tt.path)
		if a != tt.want || ev != tt.event {
			t.Errorf("%s: %s %q, want %s %q", tt.path, a, ev, tt.want, tt.event)
		}
	}
}

// TestExampleVariablesDocumented checks that configs/README.md names every
// variable the examples reference.
func TestExampleVariablesDocumented(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../../../configs/README.md")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../../../configs/*.yaml")
	ref := regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*)(?::-[^}]*)?\}`)
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			for _, m := range ref.FindAllStringSubmatch(line, -1) {
				if !bytes.Contains(readme, []byte("`"+m[1]+"`")) {
					t.Errorf("%s references ${%s}, which configs/README.md does not describe", filepath.Base(file), m[1])
				}
			}
		}
	}
}

// secretKeys are keys whose values must come from the environment in an
// example: a reader copies examples, secrets and all.
var secretKeys = map[string]bool{
	"api_token": true, "password": true, "token": true, "secret": true,
	"invite_secret": true, "account_secret": true,
}

var envOnly = regexp.MustCompile(`^(\$\{[A-Z][A-Z0-9_]*(:-)?\})?$`)

// TestExamplesKeepSecretsOut checks that no example writes a secret
// inline, in a key or inside a URL.
func TestExamplesKeepSecretsOut(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../../../configs/*.yaml")
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
