package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The copy of the shipped example changes what the benchmark says it
// changes and nothing of the defence: signals, bands, work, rate limits
// and binding stay as shipped.
func TestCopyKeepsTheDefence(t *testing.T) {
	x, err := readExample("../../configs/single-node.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if x.event == "" || x.lightBits == 0 || x.heavyBits <= x.lightBits {
		t.Fatalf("read event %q, light %d bits, heavy %d bits", x.event, x.lightBits, x.heavyBits)
	}
	out := filepath.Join(t.TempDir(), "copy.yaml")
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	if err := x.copyFor(local{listen: "127.0.0.1:1", admin: "127.0.0.1:2", inventory: "127.0.0.1:3",
		certFile: "/c.pem", keyFile: "/k.pem", dataDir: "/d", origin: "127.0.0.1:4",
		captchaBase: "http://127.0.0.1:5", webhook: "http://127.0.0.1:6/hook", now: now}, out); err != nil {
		t.Fatal(err)
	}
	orig, err := readExample("../../configs/single-node.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	var cp yaml.Node
	if err := yaml.Unmarshal(b, &cp); err != nil {
		t.Fatal(err)
	}
	a, c := orig.root.Content[0], cp.Content[0]
	for _, path := range [][]string{
		{"bot_defence", "signals"}, {"bot_defence", "secret"}, {"bot_defence", "challenge_ttl"},
		{"serve", "rate_limits"}, {"serve", "binding"}, {"serve", "trusted_proxies"},
		{"events", "0", "challenge"}, {"events", "0", "caps"},
	} {
		if !sameNode(get(a, path...), get(c, path...)) {
			t.Errorf("%s differs in the copy", strings.Join(path, "."))
		}
	}
	if v := scalar(c, "serve", "tls", "cert_file"); v != "/c.pem" {
		t.Errorf("cert_file = %q", v)
	}
	if v := scalar(c, "bot_defence", "captcha", "0", "config", "verify_url"); v != "http://127.0.0.1:5/turnstile/v0/siteverify" {
		t.Errorf("verify_url = %q", v)
	}
	if v := scalar(c, "events", "0", "queue_opens_at"); v != "2026-11-26T11:59:00Z" {
		t.Errorf("queue_opens_at = %q", v)
	}
	if len(x.changes) < 10 {
		t.Errorf("changes listed: %q", x.changes)
	}
	for _, want := range []string{"WAITROOM_ADMIN_TOKEN", "WAITROOM_CHALLENGE_SECRET"} {
		found := false
		for _, v := range x.vars {
			found = found || v == want
		}
		if !found {
			t.Errorf("vars %q lack %s", x.vars, want)
		}
	}
}

func sameNode(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || a.Value != b.Value || len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !sameNode(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}
