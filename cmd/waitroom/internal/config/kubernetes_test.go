package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// kubernetesRoles is the command each waitroom configuration in the
// Kubernetes manifests' ConfigMaps is for, by its key.
var kubernetesRoles = map[string]Role{
	"waitroom.yaml":  RoleProxy,
	"inventory.yaml": RoleSidecar,
}

// TestKubernetesConfigs checks the waitroom configurations that
// deploy/kubernetes's ConfigMaps carry as check-config would, for the
// command their Deployments run them with. (The manifests themselves are
// decoded against the Kubernetes API types in deploy/kubernetes/check, a
// module of its own.)
func TestKubernetesConfigs(t *testing.T) {
	files, err := filepath.Glob("../../../../deploy/kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Kubernetes manifests: %v", err)
	}
	env := func(name string) (string, bool) {
		if name == "WAITROOM_REPLICA" {
			return "waitroom-7d9f-abcde", true // the pod's name
		}
		return exampleEnv(name)
	}
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
			var m struct {
				Kind     string                `yaml:"kind"`
				Metadata struct{ Name string } `yaml:"metadata"`
				Data     map[string]string     `yaml:"data"`
			}
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if m.Kind != "ConfigMap" {
				continue
			}
			for key, text := range m.Data {
				role, ok := kubernetesRoles[key]
				if !ok {
					if strings.HasPrefix(m.Metadata.Name, "waitroom-redis") {
						continue // redis.conf
					}
					t.Fatalf("%s: ConfigMap %s has key %q, not a known waitroom configuration", f, m.Metadata.Name, key)
				}
				where := filepath.Base(f) + ": " + m.Metadata.Name + "/" + key
				c, err := Parse([]byte(text), env)
				if err != nil {
					t.Fatalf("%s does not parse:\n%v", where, err)
				}
				if err := Validate(c); err != nil {
					t.Fatalf("%s is not valid:\n%v", where, err)
				}
				if err := ValidateFor(c, role); err != nil {
					t.Fatalf("%s is not valid for its command:\n%v", where, err)
				}
				checked++
			}
		}
	}
	if checked != len(kubernetesRoles) {
		t.Fatalf("checked %d configurations, want %d", checked, len(kubernetesRoles))
	}
}
