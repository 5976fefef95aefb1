package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// example is the shipped configuration, read once, and what the benchmark
// learns from it.
type example struct {
	path string
	root yaml.Node
	// The first event with a challenge: its id, landing path and work.
	event, landing       string
	lightBits, heavyBits int
	lightPuzz, heavyPuzz int
	prefix               string
	vars                 []string // ${VAR} the file takes from the environment, without a default
	changes              []string // what copy changed, for the report
}

// readExample parses the configuration file at path.
func readExample(path string) (*example, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	x := &example{path: path, prefix: "/_wr"}
	if err := yaml.Unmarshal(text, &x.root); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	doc := x.root.Content[0]
	if p := get(doc, "serve", "prefix"); p != nil && p.Value != "" {
		x.prefix = p.Value
	}
	for _, ev := range seq(get(doc, "events")) {
		ch := get(ev, "challenge")
		if ch == nil || ch.Kind != yaml.MappingNode {
			continue
		}
		x.event, x.landing = scalar(ev, "id"), scalar(ev, "landing_path")
		x.lightBits, x.lightPuzz = atoi(scalar(ch, "light", "bits")), atoi(scalar(ch, "light", "puzzles"))
		x.heavyBits, x.heavyPuzz = atoi(scalar(ch, "heavy", "bits")), atoi(scalar(ch, "heavy", "puzzles"))
		break
	}
	if x.event == "" {
		return nil, fmt.Errorf("%s: no event has a challenge mapping (bands and work): nothing to measure", path)
	}
	if x.landing == "" {
		x.landing = "/"
	}
	seen := map[string]bool{}
	for _, m := range envRef.FindAllStringSubmatch(string(text), -1) {
		if m[2] == "" && !seen[m[1]] && !commentedOut(string(text), m[0]) {
			seen[m[1]] = true
			x.vars = append(x.vars, m[1])
		}
	}
	return x, nil
}

// envRef matches ${NAME} and ${NAME:-default}.
var envRef = regexp.MustCompile(`\$\{([A-Z0-9_]+)(:-[^}]*)?\}`)

// commentedOut reports whether every occurrence of ref is in a comment.
func commentedOut(text, ref string) bool {
	for _, line := range strings.Split(text, "\n") {
		i := strings.Index(line, ref)
		if i >= 0 && !strings.Contains(line[:i], "#") {
			return false
		}
	}
	return true
}

// local is what the benchmark's copy of the configuration points at.
type local struct {
	listen, admin, inventory string // host:port
	certFile, keyFile        string
	dataDir                  string
	origin                   string // host:port
	captchaBase              string // http://host:port of the CAPTCHA stub
	webhook                  string // URL of the webhook receiver
	now                      time.Time
}

// copyFor writes a copy of the configuration with only what must differ
// on this machine changed, and records each change in x.changes.
func (x *example) copyFor(l local, out string) error {
	doc := x.root.Content[0]
	x.changes = nil
	set := func(n *yaml.Node, what, v string) {
		if n == nil {
			return
		}
		n.Kind, n.Tag, n.Value, n.Style = yaml.ScalarNode, "!!str", v, 0
		x.changes = append(x.changes, what+" → "+v)
	}
	set(ensure(doc, "serve", "tls", "listen"), "serve.tls.listen", l.listen)
	set(ensure(doc, "serve", "tls", "cert_file"), "serve.tls.cert_file", l.certFile)
	set(ensure(doc, "serve", "tls", "key_file"), "serve.tls.key_file", l.keyFile)
	set(get(doc, "admin", "listen"), "admin.listen", l.admin)
	set(get(doc, "inventory", "listen"), "inventory.listen", l.inventory)
	set(get(doc, "admission", "data_dir"), "admission.data_dir", l.dataDir+"/admission")
	set(get(doc, "inventory", "data_dir"), "inventory.data_dir", l.dataDir+"/inventory")
	for i, o := range seq(get(doc, "origins")) {
		a := get(o, "addresses")
		if a == nil {
			continue
		}
		a.Content = []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: l.origin}}
		x.changes = append(x.changes, fmt.Sprintf("origins[%d].addresses → [%s] (the recording origin)", i, l.origin))
	}
	for i, c := range seq(get(doc, "bot_defence", "captcha")) {
		kind := scalar(c, "type")
		path, ok := stubPaths[kind]
		if !ok {
			continue
		}
		cfg := ensure(c, "config")
		set(ensure(cfg, "verify_url"), fmt.Sprintf("bot_defence.captcha[%d].config.verify_url", i), l.captchaBase+path.verify)
		set(ensure(cfg, "script_url"), fmt.Sprintf("bot_defence.captcha[%d].config.script_url", i), l.captchaBase+path.script)
	}
	for i, s := range seq(get(doc, "sinks")) {
		if scalar(s, "type") == "webhook" {
			set(get(s, "config", "url"), fmt.Sprintf("sinks[%d].config.url", i), l.webhook)
		}
	}
	// The example's sale is at a fixed date; a queue that is not open
	// takes no joins, so the dates move to now (same order, same gaps
	// where they fit): the queue opened a minute ago, the sale is in an
	// hour, the queue closes in a week.
	for i, ev := range seq(get(doc, "events")) {
		opens := get(ev, "queue_opens_at")
		if opens == nil {
			continue
		}
		if t, err := time.Parse(time.RFC3339, opens.Value); err == nil && t.Before(l.now) {
			continue
		}
		set(opens, fmt.Sprintf("events[%d].queue_opens_at", i), l.now.Add(-time.Minute).UTC().Format(time.RFC3339))
		set(get(ev, "on_sale_at"), fmt.Sprintf("events[%d].on_sale_at", i), l.now.Add(time.Hour).UTC().Format(time.RFC3339))
		set(get(ev, "closes_at"), fmt.Sprintf("events[%d].closes_at", i), l.now.Add(7*24*time.Hour).UTC().Format(time.RFC3339))
	}
	b, err := yaml.Marshal(&x.root)
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o600)
}

// get follows mapping keys (and sequence indices, as numbers) from n.
func get(n *yaml.Node, path ...string) *yaml.Node {
	for _, k := range path {
		if n == nil {
			return nil
		}
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					next = n.Content[i+1]
				}
			}
			n = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
		default:
			return nil
		}
	}
	return n
}

// ensure is get, adding missing mapping keys (as empty mappings, or an
// empty scalar for the last).
func ensure(n *yaml.Node, path ...string) *yaml.Node {
	for j, k := range path {
		if c := get(n, k); c != nil {
			n = c
			continue
		}
		if n.Kind != yaml.MappingNode {
			if n.Kind == yaml.ScalarNode && n.Value == "" || n.Tag == "!!null" {
				n.Kind, n.Tag, n.Value = yaml.MappingNode, "!!map", ""
			} else {
				return nil
			}
		}
		v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		if j == len(path)-1 {
			v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str"}
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, v)
		n = v
	}
	return n
}

func seq(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return slices.Clone(n.Content)
}

func scalar(n *yaml.Node, path ...string) string {
	if v := get(n, path...); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
