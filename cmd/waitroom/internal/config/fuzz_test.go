package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzParse feeds the parser what users might write, and worse. It must
// never panic; every failure must be an error made of problems with text;
// and a Config that parses must survive Validate.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"testdata/*/*.yaml", "../../../../configs/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("inventory: {api_token: ${X:-$$}, reaper: {<<: *r}}\n"))
	f.Add([]byte("log: &l {level: debug}\ninventory:\n  redis:\n    cluster: [*l, *l]\n"))
	f.Add([]byte("events:\n  - &e {id: a, on_sale_at: now+30s, lanes: [{name: p, invite_secret: ${X:-}}]}\n  - {<<: *e, id: b, queue_opens_at: 2027-03-01T09:00:00Z}\n"))
	f.Add([]byte("origins: [{name: s, addresses: ['a:1'], health_check: {path: ''}}, ~, x]\nroutes: [{glob: '/[', event: a}]\n"))
	f.Add([]byte("serve:\n  keys: {verify: [{}, {algorithm: EdDSA}]}\n  binding: [*b]\nadmin: &b {token: ${WAITROOM_INVENTORY_TOKEN}}\n"))
	f.Add([]byte("events: [{id: a, on_sale_at: now+-1s, closes_at: [now], page: {texts: {en: {t: ${INJECT}}}}}]\n"))
	env := func(name string) (string, bool) {
		switch name {
		case "WAITROOM_INVENTORY_TOKEN":
			return "0123456789abcdef0123", true
		case "INJECT":
			return "\n: - [ {", true
		case "EMPTY":
			return "", true
		}
		return "", false
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Check goes on past problems: it never panics, and agrees with
		// Parse and Validate on whether there is one.
		cc, cerr := CheckData(bytes.Clone(data), env, 0)
		c, err := Parse(data, env)
		if (cerr == nil) != (err == nil && Validate(c) == nil) || (cerr == nil) != (cc != nil) {
			t.Fatalf("Check says %v, Parse and Validate %v", cerr, err)
		}
		if err != nil {
			if c != nil {
				t.Fatal("a Config came back with an error")
			}
			ps := Problems(err)
			if len(ps) == 0 {
				t.Fatal("an error without problems")
			}
			for _, p := range ps {
				if strings.TrimSpace(p.Error()) == "" {
					t.Fatalf("an empty problem in %q", err)
				}
			}
			return
		}
		if c == nil {
			t.Fatal("no Config and no error")
		}
		if err := Validate(c); err != nil && len(Problems(err)) == 0 {
			t.Fatal("a validation error without problems")
		}
		if err := ValidateFor(c, RoleProxy|RoleSidecar); err != nil && len(Problems(err)) == 0 {
			t.Fatal("a validation error without problems")
		}
		for i := range c.Events {
			// Resolving never panics, whatever the times.
			_, _, _, _ = c.Events[i].Schedule(time.Unix(0, 0))
		}
	})
}
