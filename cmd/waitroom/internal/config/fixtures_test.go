package config

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// envRef matches a ${NAME} reference in a message.
var envRef = regexp.MustCompile(`\$\{[A-Z0-9_]+\}`)

// fixtureEnv is the environment the fixtures see. Every value holding
// SECRET must never appear in an error.
var fixtureEnv = map[string]string{
	"WAITROOM_INVENTORY_TOKEN":  "tok-0123456789abcdef-SECRET",
	"REDIS_PASSWORD":            "redis-pw-SECRET",
	"EMPTY":                     "",
	"INJECT":                    "tok-0123456789abcdef\ninsecure_no_auth: true",
	"SHORT_TOKEN":               "short",
	"REDIS_URL_WITH_PASSWORD":   "redis://admin:url-pw-SECRET@10.0.0.9:6379/0",
	"REDIS_URL_BROKEN":          "redis://user:broken-pw-SECRET@host:port/0",
	"WAITROOM_SIGNING_SECRET":   "signing-0123456789abcdef0123456789-SECRET",
	"WAITROOM_ADMIN_TOKEN":      "admin-0123456789abcdef-SECRET",
	"WAITROOM_BYPASS_SECRET":    "bypass-0123456789abcdef-SECRET",
	"PRESALE_INVITE_SECRET":     "invite-0123456789abcdef0123456789-SECRET",
	"WAITROOM_CHALLENGE_SECRET": "challenge-0123456789abcdef012345678-SECRET",
	"FANCLUB_ACCOUNT_SECRET":    "account-0123456789abcdef0123456789-SECRET",
	"WAITROOM_IDENTITY_SECRET":  "identity-0123456789abcdef0123456789-SECRET",
	"SHORT_SECRET":              "short-SECRET",
	"REPEATED_SECRET":           "SECRET-SECRET-SECRET-SECRET-SECRET-SECRET-",
	"PLACEHOLDER_SECRET":        "changeme-SECRET-0123456789abcdef-xyz",
	"FEW_BYTES_SECRET":          "SECRETSECRETSECRETSECRETSECRET__",
	"RUN_SECRET":                "abcdefghijklmnopqrstuvwxyzabcdefghijkl",
}

func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
}

// parseAndValidate is what check-config does: the parse errors if any,
// else the validation errors.
func parseAndValidate(data []byte, env map[string]string) (*Config, error) {
	c, err := Parse(data, lookupIn(env))
	if err != nil {
		return nil, err
	}
	return c, Validate(c)
}

// TestGoodFixtures parses and validates every testdata/good/*.yaml and
// compares the decoded Config with its .golden file.
func TestGoodFixtures(t *testing.T) {
	t.Parallel()
	eachFixture(t, "testdata/good", func(t *testing.T, file string, data []byte) {
		c, err := parseAndValidate(data, fixtureEnv)
		if err != nil {
			t.Fatalf("want valid, got:\n%v", err)
		}
		got, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, strings.TrimSuffix(file, ".yaml")+".golden", got)
	})
}

// eachFixture runs fn, in a parallel subtest named after the file, for
// every dir/*.yaml with its contents.
func eachFixture(t *testing.T, dir string, fn func(t *testing.T, file string, data []byte)) {
	t.Helper()
	files, err := filepath.Glob(dir + "/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s: %v", dir, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			fn(t, file, data)
		})
	}
}

// TestBadFixtures checks that every testdata/bad/*.yaml fails with the
// text in its .err file, and that no secret leaks into that text.
func TestBadFixtures(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, err = parseAndValidate(data, fixtureEnv)
			if err == nil {
				t.Fatal("want an error, got a valid configuration")
			}
			text := err.Error()
			// Messages may name a variable (${WAITROOM_SIGNING_SECRET}),
			// never show its value.
			if strings.Contains(envRef.ReplaceAllString(text, ""), "SECRET") {
				t.Errorf("a secret from the environment leaks into the error:\n%s", text)
			}
			for _, p := range Problems(err) {
				if strings.Contains(p.Msg, "\n") {
					t.Errorf("problem spans lines: %q", p.Msg)
				}
			}
			golden(t, strings.TrimSuffix(file, ".yaml")+".err", []byte(text+"\n"))
		})
	}
}

// golden compares got with the file, or rewrites the file under -update.
func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/config -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test ./internal/config -update if the change is intended)\ngot:\n%s\nwant:\n%s", file, got, want)
	}
}
