package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseValues(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"TOKEN":    "0123456789abcdef0123",
		"EMPTY":    "",
		"BATCH":    "42",
		"INJECT":   "\nfoo: bar",
		"INJECT2":  "x\ninventory:\n  insecure_no_auth: true",
		"FLOW":     "{a: 1}",
		"NESTED":   "${TOKEN}",
		"DOLLARS":  "a$$b",
		"NULLISH":  "null",
		"TILDE":    "~",
		"TRUE":     "true",
		"MERGE":    "<<",
		"INTERVAL": "750ms",
	}
	tests := []struct {
		name  string
		yaml  string
		check func(t *testing.T, c *Config)
	}{
		{"defaults where the file is silent", "log:\n  level: warn\n", func(t *testing.T, c *Config) {
			want := Default()
			want.Log.Level = LevelWarn
			if !reflect.DeepEqual(c, want) {
				t.Errorf("got %+v\nwant %+v", c, want)
			}
		}},
		{"plain reference", "inventory:\n  api_token: ${TOKEN}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.APIToken, env["TOKEN"])
		}},
		{"reference inside text", "inventory:\n  data_dir: /srv/${TOKEN}/x\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.DataDir, "/srv/"+env["TOKEN"]+"/x")
		}},
		{"default when unset", "inventory:\n  data_dir: ${UNSET:-/tmp/d}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.DataDir, "/tmp/d")
		}},
		{"default when empty", "inventory:\n  data_dir: ${EMPTY:-/tmp/d}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.DataDir, "/tmp/d")
		}},
		{"empty default", "inventory:\n  redis:\n    password: ${UNSET:-}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.Redis.Password, "")
		}},
		{"set but empty without default", "inventory:\n  redis:\n    password: ${EMPTY}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.Redis.Password, "")
		}},
		{"default taken as written", "inventory:\n  data_dir: ${UNSET:-$x}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.DataDir, "$x")
		}},
		{"dollar escape", "inventory:\n  data_dir: a$$b$$$$c\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.DataDir, "a$b$$c")
		}},
		{"escaped reference is literal", "inventory:\n  data_dir: $${TOKEN}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.DataDir, "${TOKEN}")
		}},
		{"values are not expanded again", "inventory:\n  data_dir: ${NESTED}-${DOLLARS}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.DataDir, "${TOKEN}-a$$b")
		}},
		{"newline and key in a value stay one string", "inventory:\n  api_token: ${INJECT}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.APIToken, "\nfoo: bar")
		}},
		{"a variable cannot set another key", "inventory:\n  data_dir: ${INJECT2}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.DataDir, env["INJECT2"])
			eq(t, c.Inventory.InsecureNoAuth, false)
		}},
		{"flow syntax in a value stays a string", "inventory:\n  redis:\n    username: ${FLOW}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.Redis.Username, "{a: 1}")
		}},
		{"quoted reference", "inventory:\n  api_token: \"${TOKEN}\"\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.APIToken, env["TOKEN"])
		}},
		{"single-quoted reference", "inventory:\n  api_token: '${TOKEN}'\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.APIToken, env["TOKEN"])
		}},
		{"block scalar reference", "inventory:\n  api_token: >-\n    ${TOKEN}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.APIToken, env["TOKEN"])
		}},
		{"null-looking values stay strings", "inventory:\n  data_dir: ${NULLISH}\n  api_token: ${TILDE}\n  redis:\n    username: ${MERGE}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.DataDir, "null")
			eq(t, c.Inventory.APIToken, "~")
			eq(t, c.Inventory.Redis.Username, "<<")
		}},
		{"numbers, booleans and durations from variables", "inventory:\n  insecure_no_auth: ${TRUE}\n  reaper:\n    batch: ${BATCH}\n    interval: ${INTERVAL}\n  max_body_bytes: ${UNSET:-2048}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.InsecureNoAuth, true)
			eq(t, c.Inventory.Reaper.Batch, 42)
			eq(t, c.Inventory.Reaper.Interval, Duration(750*time.Millisecond))
			eq(t, c.Inventory.MaxBodyBytes, int64(2048))
		}},
		{"a number from a variable still fills a string", "inventory:\n  api_token: ${BATCH}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.APIToken, "42")
		}},
		{"keys and comments are not expanded", "inventory: # ${UNSET}\n  data_dir: x # $ ${UNSET}\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.DataDir, "x")
		}},
		{"an alias is expanded once", "inventory:\n  data_dir: &d a$$${TOKEN}\n  redis:\n    username: *d\n", func(t *testing.T, c *Config) {
			eq(t, c.Inventory.DataDir, "a$"+env["TOKEN"])
			eq(t, c.Inventory.Redis.Username, "a$"+env["TOKEN"])
		}},
		{"cluster list replaces the default", "inventory:\n  redis:\n    cluster: [a:1, b:2]\n", func(t *testing.T, c *Config) {
			eq(t, strings.Join(c.Inventory.Redis.Cluster, ","), "a:1,b:2")
		}},
		{"binding defaults to the user agent and the network", "log:\n  level: warn\n", func(t *testing.T, c *Config) {
			eq(t, fmt.Sprint(c.Serve.Binding), "[user_agent ip_prefix]")
		}},
		{"an explicit empty binding binds to nothing", "serve:\n  binding: []\n", func(t *testing.T, c *Config) {
			if c.Serve.Binding == nil || len(c.Serve.Binding) != 0 {
				t.Errorf("binding = %#v, want empty", c.Serve.Binding)
			}
		}},
		{"binding replaces the default", "serve:\n  binding: [user_agent]\n", func(t *testing.T, c *Config) {
			eq(t, fmt.Sprint(c.Serve.Binding), "[user_agent]")
		}},
		{"explicit document start and end", "---\nlog:\n  format: json\n...\n", func(t *testing.T, c *Config) {
			eq(t, c.Log.Format, FormatJSON)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse([]byte(tt.yaml), lookupIn(env))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestParseMergeKey(t *testing.T) {
	t.Parallel()
	const in = `
inventory:
  reaper:
    <<: [{interval: 3s}, {batch: 9}]
  redis: &r
    username: u
log:
  <<: {level: debug}
`
	c, err := Parse([]byte(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, c.Inventory.Reaper.Interval, Duration(3*time.Second))
	eq(t, c.Inventory.Reaper.Batch, 9)
	eq(t, c.Log.Level, LevelDebug)

	_, err = Parse([]byte("log:\n  <<: {levl: debug}\n"), nil)
	wantProblems(t, err, "line 2: log.levl: unknown key; did you mean level?")
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"unset variable", "inventory:\n  api_token: ${NOPE}\n", []string{
			`line 2: inventory.api_token: environment variable NOPE is not set: make a secret with export NOPE="$(openssl rand -hex 32)" (and keep it)`}},
		{"every unset variable", "inventory:\n  api_token: ${A}${B}\n", []string{
			`line 2: inventory.api_token: environment variable A is not set: make a secret with export A="$(openssl rand -hex 32)" (and keep it)`,
			`line 2: inventory.api_token: environment variable B is not set: make a secret with export B="$(openssl rand -hex 32)" (and keep it)`}},
		{"lone dollar at the end", "inventory:\n  data_dir: x$\n", []string{
			"line 2: inventory.data_dir: a lone $: write $$ for a literal $, or ${NAME} for an environment variable"}},
		{"shell-style reference", "inventory:\n  data_dir: $HOME\n", []string{
			"line 2: inventory.data_dir: a lone $: write $$ for a literal $, or ${NAME} for an environment variable"}},
		{"name starting with a digit", "inventory:\n  data_dir: ${1X}\n", []string{
			"line 2: inventory.data_dir: bad reference ${1X}: want ${NAME} or ${NAME:-default}, NAME made of letters, digits and _"}},
		{"unknown key under a list", "inventory:\n  redis:\n    cluster:\n      - {host: a}\n", []string{
			"line 4: inventory.redis.cluster[0]: cannot unmarshal !!map into string: write a single value (quote it if it holds : or #)"}},
		{"unknown top-level key", "lgo:\n  level: info\n", []string{
			"line 1: lgo: unknown key; did you mean log?"}},
		{"key that is not a name", "? [a, b]\n: c\n", []string{
			"line 1: a key must be a plain name",
			"line 1: cannot unmarshal !!seq into string: write a single value (quote it if it holds : or #)"}},
		{"fraction into an integer", "inventory:\n  reaper:\n    batch: 2.5\n", []string{
			"line 3: inventory.reaper.batch: must be a whole number"}},
		{"duration without unit", "inventory:\n  hold_retention: 60\n", []string{
			`line 2: inventory.hold_retention: invalid duration "60": want a number with a unit, such as 500ms, 1s or 24h`}},
		{"scalar document", "hello\n", []string{
			"line 1: the top level must be a mapping of sections, such as log: and inventory:"}},
		{"null document", "~\n", []string{
			"no configuration: the document is empty"}},
		{"second document", "log: {}\n---\nlog: {}\n", []string{
			"line 2: a second YAML document: a configuration file holds exactly one"}},
		{"second document that does not parse", "log: {}\n---\n[\n", []string{
			"line 3: did not find expected node content"}},
		{"tab indentation", "log:\n\tlevel: info\n", []string{
			"line 2: found character that cannot start any token"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse([]byte(tt.yaml), nil)
			if c != nil {
				t.Errorf("got a Config with an error")
			}
			wantProblems(t, err, tt.want...)
		})
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	_, err := Load(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v, want os.ErrNotExist", err)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("log:\n  levl: x\n  fromat: y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad)
	wantProblems(t, err,
		bad+":2: log.levl: unknown key; did you mean level?",
		bad+":3: log.fromat: unknown key; did you mean format?")

	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("log:\n  level: error\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(good)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, c.Log.Level, LevelError)
}

// TestLoadEnv checks that Load reads the process environment.
func TestLoadEnv(t *testing.T) {
	t.Setenv("WAITROOM_CONFIG_TEST_DIR", "/from/env")
	file := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(file, []byte("inventory:\n  data_dir: ${WAITROOM_CONFIG_TEST_DIR}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, c.Inventory.DataDir, "/from/env")
}

func TestErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e    Error
		want string
	}{
		{Error{Msg: "m"}, "m"},
		{Error{Path: "a.b", Msg: "m"}, "a.b: m"},
		{Error{Line: 3, Path: "a.b", Msg: "m"}, "line 3: a.b: m"},
		{Error{File: "f.yaml", Line: 3, Path: "a.b", Msg: "m"}, "f.yaml:3: a.b: m"},
		{Error{File: "f.yaml", Path: "a.b", Msg: "m"}, "f.yaml: a.b: m"},
		{Error{File: "f.yaml", Msg: "m"}, "f.yaml: m"},
	}
	for _, tt := range tests {
		eq(t, tt.e.Error(), tt.want)
	}
}

func TestInFileCopies(t *testing.T) {
	t.Parallel()
	a := &Error{Path: "a", Msg: "x"}
	b := &Error{File: "other.yaml", Path: "b", Msg: "y"}
	err := InFile("f.yaml", errors.Join(a, b))
	wantProblems(t, err, "f.yaml: a: x", "other.yaml: b: y")
	eq(t, a.File, "")
	if InFile("f.yaml", nil) != nil {
		t.Error("InFile(nil) is not nil")
	}
	wantProblems(t, InFile("f.yaml", errors.New("plain")), "f.yaml: plain")
}

// wantProblems checks err's problems, in order, against want.
func wantProblems(t *testing.T, err error, want ...string) {
	t.Helper()
	var got []string
	for _, p := range Problems(err) {
		got = append(got, p.Error())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func eq[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

// TestParseAliasBomb checks that aliases multiplying each other (the
// "billion laughs") cost the parser no more than their text.
func TestParseAliasBomb(t *testing.T) {
	t.Parallel()
	parseBomb(t, "x0: &x0 [\"${UNSET:-lol}\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n",
		"inventory:\n  redis:\n    cluster: *x9\n")
}

// parseBomb parses first, nine anchors x1…x9 each a list of ten aliases
// of the one before (10⁹ copies of x0 if expanded), and last, which uses
// *x9; the parse must fail, and quickly.
func parseBomb(t *testing.T, first, last string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(first)
	for i := 1; i <= 9; i++ {
		b.WriteString("x" + string(rune('0'+i)) + ": &x" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*x" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	b.WriteString(last)
	start := time.Now()
	_, err := Parse([]byte(b.String()), nil)
	if err == nil {
		t.Fatal("a bomb parsed")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}
