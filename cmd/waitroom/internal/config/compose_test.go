package config

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeFile is the shape of docker-compose.yaml the test reads: what
// refers to files, images and other services.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Build       any               `yaml:"build"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		DependsOn   map[string]any    `yaml:"depends_on"`
		Ports       []string          `yaml:"ports"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// composeRoles is the waitroom command each service runs, by its first
// argument.
var composeRoles = map[string]Role{"serve": RoleProxy, "inventory": RoleSidecar}

// TestDockerCompose checks docker-compose.yaml without a Docker engine:
// it parses, every service has an image or a build whose Dockerfile
// exists, every bind-mounted path and named volume exists, depends_on
// names services, every variable a container's waitroom configuration
// needs is in that container's environment, and each configuration passes
// check-config for the command the service runs.
func TestDockerCompose(t *testing.T) {
	const root = "../../../.."
	data, err := os.ReadFile(filepath.Join(root, "docker-compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cf composeFile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&cf); err != nil {
		t.Fatalf("docker-compose.yaml: %v", err)
	}
	for _, want := range []string{"redis", "origin", "inventory", "waitroom"} {
		if _, ok := cf.Services[want]; !ok {
			t.Errorf("docker-compose.yaml has no %s service", want)
		}
	}
	configs := 0
	for name, s := range cf.Services {
		if s.Image == "" && s.Build == nil {
			t.Errorf("%s: neither image nor build", name)
		}
		if ctx, ok := s.Build.(string); ok {
			if _, err := os.Stat(filepath.Join(root, ctx, "Dockerfile")); err != nil {
				t.Errorf("%s: build context %q has no Dockerfile", name, ctx)
			}
		}
		for dep := range s.DependsOn {
			if _, ok := cf.Services[dep]; !ok {
				t.Errorf("%s depends on %q, which is no service", name, dep)
			}
		}
		mounts := map[string]string{} // container path → host path
		for _, v := range s.Volumes {
			parts := strings.Split(v, ":")
			if len(parts) < 2 {
				t.Errorf("%s: volume %q is not SOURCE:TARGET", name, v)
				continue
			}
			if strings.HasPrefix(parts[0], ".") {
				if _, err := os.Stat(filepath.Join(root, parts[0])); err != nil {
					t.Errorf("%s: mounts %s, which does not exist", name, parts[0])
				}
				mounts[parts[1]] = parts[0]
			} else if _, ok := cf.Volumes[parts[0]]; !ok {
				t.Errorf("%s: named volume %q is not declared", name, parts[0])
			}
		}
		i := slices.Index(s.Command, "-c")
		if i < 0 || i+1 == len(s.Command) {
			continue
		}
		role, ok := composeRoles[s.Command[0]]
		if !ok {
			t.Errorf("%s runs waitroom %q, which the test does not know", name, s.Command[0])
			continue
		}
		host := ""
		for dir, src := range mounts {
			if rest, ok := strings.CutPrefix(s.Command[i+1], dir+"/"); ok {
				host = filepath.Join(root, src, rest)
			}
		}
		if host == "" {
			t.Errorf("%s reads %s, which no bind mount provides", name, s.Command[i+1])
			continue
		}
		text, err := os.ReadFile(host)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, ref := range envRefs(t, text) {
			if _, ok := s.Environment[ref]; !ok {
				t.Errorf("%s: %s needs ${%s}, which the service's environment lacks", name, host, ref)
			}
		}
		c, err := Parse(text, exampleEnv)
		if err != nil {
			t.Fatalf("%s does not parse:\n%v", host, err)
		}
		if err := Validate(c); err != nil {
			t.Fatalf("%s is not valid:\n%v", host, err)
		}
		if err := ValidateFor(c, role); err != nil {
			t.Fatalf("%s is not valid for %s:\n%v", host, s.Command[0], err)
		}
		configs++
	}
	if configs != 2 {
		t.Errorf("checked %d waitroom configurations, want 2 (serve and inventory)", configs)
	}
}

// envRefs returns the variables a configuration's values refer to
// without a default (${NAME}); comments do not count, as Parse expands
// values only.
func envRefs(t *testing.T, text []byte) []string {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	var refs []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			for _, m := range re.FindAllStringSubmatch(n.Value, -1) {
				refs = append(refs, m[1])
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	return refs
}
