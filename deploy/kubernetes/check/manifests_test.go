package check

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// object is one decoded manifest document.
type object struct {
	file string
	kind string
	v    any
}

// kinds are the types the manifests may use.
var kinds = map[string]func() any{
	"v1/Namespace":                  func() any { return &corev1.Namespace{} },
	"v1/ConfigMap":                  func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                     func() any { return &corev1.Secret{} },
	"v1/Service":                    func() any { return &corev1.Service{} },
	"apps/v1/Deployment":            func() any { return &appsv1.Deployment{} },
	"apps/v1/StatefulSet":           func() any { return &appsv1.StatefulSet{} },
	"policy/v1/PodDisruptionBudget": func() any { return &policyv1.PodDisruptionBudget{} },
}

// load decodes every document of every manifest strictly.
func load(t *testing.T) []object {
	t.Helper()
	files, err := filepath.Glob("../*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in deploy/kubernetes: %v", err)
	}
	var out []object
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			key := tm.APIVersion + "/" + tm.Kind
			mk, ok := kinds[key]
			if !ok {
				t.Fatalf("%s document %d: kind %q is not one the test knows", f, i, key)
			}
			v := mk()
			if err := yaml.UnmarshalStrict([]byte(doc), v); err != nil {
				t.Fatalf("%s document %d (%s): %v", f, i, key, err)
			}
			// Strict in JSON too: what kubectl sends.
			j, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(j))
			dec.DisallowUnknownFields()
			if err := dec.Decode(mk()); err != nil {
				t.Fatalf("%s document %d (%s): %v", f, i, key, err)
			}
			out = append(out, object{file: filepath.Base(f), kind: tm.Kind, v: v})
		}
	}
	return out
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// A misspelt field is refused: the test would catch one.
func TestStrictDecodingRefusesUnknownFields(t *testing.T) {
	doc := "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: 80, targetPortt: http}]}\n"
	if err := yaml.UnmarshalStrict([]byte(doc), &corev1.Service{}); err == nil {
		t.Fatal("a misspelt field decoded")
	}
}

func TestManifests(t *testing.T) {
	objs := load(t)
	byKind := map[string][]object{}
	for _, o := range objs {
		byKind[o.kind] = append(byKind[o.kind], o)
	}
	for _, k := range []string{"Namespace", "ConfigMap", "Secret", "Service", "Deployment", "PodDisruptionBudget"} {
		if len(byKind[k]) == 0 {
			t.Errorf("no %s among the manifests", k)
		}
	}
	secrets := map[string]*corev1.Secret{}
	for _, o := range byKind["Secret"] {
		s := o.v.(*corev1.Secret)
		secrets[s.Name] = s
	}
	configMaps := map[string]*corev1.ConfigMap{}
	for _, o := range byKind["ConfigMap"] {
		c := o.v.(*corev1.ConfigMap)
		configMaps[c.Name] = c
	}
	services := byKind["Service"]
	pdbs := byKind["PodDisruptionBudget"]

	deployments := map[string]*appsv1.Deployment{}
	for _, o := range byKind["Deployment"] {
		d := o.v.(*appsv1.Deployment)
		deployments[d.Name] = d
		t.Run(d.Name, func(t *testing.T) {
			checkWorkload(t, d.Name, d.Spec.Selector, d.Spec.Template, secrets, configMaps)
			if !selected(services, d.Spec.Template.Labels) {
				t.Error("no Service selects its pods")
			}
			if !selected(pdbs, d.Spec.Template.Labels) {
				t.Error("no PodDisruptionBudget covers its pods")
			}
		})
	}
	for _, name := range []string{"waitroom", "waitroom-inventory"} {
		if deployments[name] == nil {
			t.Errorf("no Deployment %q", name)
		}
	}
	if d := deployments["waitroom"]; d != nil {
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
			t.Errorf("waitroom runs %v replicas, want 3", d.Spec.Replicas)
		}
		c := d.Spec.Template.Spec.Containers[0]
		if !slices.Equal(c.Args[:1], []string{"serve"}) {
			t.Errorf("waitroom runs %q, want serve", c.Args)
		}
		if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
			t.Error("waitroom's readiness is not /readyz")
		}
		if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
			t.Error("waitroom's liveness is not /healthz")
		}
	}
	if d := deployments["waitroom-inventory"]; d != nil {
		if c := d.Spec.Template.Spec.Containers[0]; !slices.Equal(c.Args[:1], []string{"inventory"}) {
			t.Errorf("the sidecar runs %q, want inventory", c.Args)
		}
	}
	for _, o := range byKind["StatefulSet"] {
		s := o.v.(*appsv1.StatefulSet)
		checkWorkload(t, s.Name, s.Spec.Selector, s.Spec.Template, secrets, configMaps, s.Spec.VolumeClaimTemplates...)
	}
}

// checkWorkload checks a pod template: it is selected by its own
// selector, runs as non-root with a read-only root file system and no
// privileges, asks for resources, and every Secret, key, ConfigMap and
// file it refers to exists, as does every ${NAME} (without a default) of
// the waitroom configuration it runs.
func checkWorkload(t *testing.T, name string, sel *metav1.LabelSelector, tmpl corev1.PodTemplateSpec,
	secrets map[string]*corev1.Secret, configMaps map[string]*corev1.ConfigMap, claims ...corev1.PersistentVolumeClaim) {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("%s: selector: %v", name, err)
	}
	if !s.Matches(labelSet(tmpl.Labels)) {
		t.Errorf("%s: the selector does not select its own pods", name)
	}
	ps := tmpl.Spec.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot {
		t.Errorf("%s: pods may run as root", name)
	}
	if ps == nil || ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: no RuntimeDefault seccomp profile", name)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range tmpl.Spec.Volumes {
		volumes[v.Name] = v
	}
	for _, c := range claims {
		volumes[c.Name] = corev1.Volume{Name: c.Name}
	}
	for _, c := range tmpl.Spec.Containers {
		sc := c.SecurityContext
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s/%s: the root file system is writable", name, c.Name)
		}
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s/%s: privilege escalation allowed", name, c.Name)
		}
		if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			t.Errorf("%s/%s: capabilities not dropped", name, c.Name)
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
			t.Errorf("%s/%s: no CPU and memory requests and memory limit", name, c.Name)
		}
		if c.ReadinessProbe == nil || c.LivenessProbe == nil {
			t.Errorf("%s/%s: no readiness or liveness probe", name, c.Name)
		}
		env := map[string]bool{}
		for _, e := range c.EnvFrom {
			if e.SecretRef == nil {
				continue
			}
			sec := secrets[e.SecretRef.Name]
			if sec == nil {
				t.Fatalf("%s/%s: Secret %q is not among the manifests", name, c.Name, e.SecretRef.Name)
			}
			for k := range sec.StringData {
				env[k] = true
			}
		}
		for _, e := range c.Env {
			env[e.Name] = true
			if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
				sec := secrets[r.SecretKeyRef.Name]
				if sec == nil {
					t.Fatalf("%s/%s: Secret %q is not among the manifests", name, c.Name, r.SecretKeyRef.Name)
				}
				if _, ok := sec.StringData[r.SecretKeyRef.Key]; !ok {
					t.Errorf("%s/%s: Secret %q has no key %q", name, c.Name, r.SecretKeyRef.Name, r.SecretKeyRef.Key)
				}
			}
		}
		for _, m := range c.VolumeMounts {
			v, ok := volumes[m.Name]
			if !ok {
				t.Errorf("%s/%s: mounts volume %q, which the pod does not have", name, c.Name, m.Name)
				continue
			}
			if v.ConfigMap == nil {
				continue
			}
			cm := configMaps[v.ConfigMap.Name]
			if cm == nil {
				t.Fatalf("%s/%s: ConfigMap %q is not among the manifests", name, c.Name, v.ConfigMap.Name)
			}
			// The configuration file the container is told to read.
			for i, a := range c.Args {
				if a != "-c" || i+1 == len(c.Args) {
					continue
				}
				file, ok := strings.CutPrefix(c.Args[i+1], m.MountPath+"/")
				if !ok {
					continue
				}
				text, ok := cm.Data[file]
				if !ok {
					t.Errorf("%s/%s: reads %s, which ConfigMap %q has no key for", name, c.Name, c.Args[i+1], cm.Name)
					continue
				}
				for _, ref := range envRefs(t, text) {
					if !env[ref] {
						t.Errorf("%s/%s: %s needs ${%s}, which the container's environment lacks", name, c.Name, file, ref)
					}
				}
			}
		}
	}
}

// selected reports whether a Service or a PodDisruptionBudget among objs
// selects pods with labels.
func selected(objs []object, labels map[string]string) bool {
	for _, o := range objs {
		switch v := o.v.(type) {
		case *corev1.Service:
			if len(v.Spec.Selector) > 0 && labelSet(labels).matchesAll(v.Spec.Selector) {
				return true
			}
		case *policyv1.PodDisruptionBudget:
			s, err := metav1.LabelSelectorAsSelector(v.Spec.Selector)
			if err == nil && !s.Empty() && s.Matches(labelSet(labels)) {
				return true
			}
		}
	}
	return false
}

// labelSet is pod labels as apimachinery's labels.Labels.
type labelSet map[string]string

func (l labelSet) Has(k string) bool   { _, ok := l[k]; return ok }
func (l labelSet) Get(k string) string { return l[k] }
func (l labelSet) Lookup(k string) (string, bool) {
	v, ok := l[k]
	return v, ok
}

func (l labelSet) matchesAll(sel map[string]string) bool {
	for k, v := range sel {
		if l[k] != v {
			return false
		}
	}
	return true
}

// envRefs returns the variables a waitroom configuration's values refer
// to without a default (${NAME}); comments do not count, as waitroom
// expands values only.
func envRefs(t *testing.T, text string) []string {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	var refs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			for _, m := range re.FindAllStringSubmatch(v, -1) {
				refs = append(refs, m[1])
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	return refs
}
