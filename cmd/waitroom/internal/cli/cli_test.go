package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/version"
)

// run runs the command line in-process.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCommandLine(t *testing.T) {
	t.Parallel()
	good := writeFile(t, "good.yaml", "inventory:\n  api_token: 7f3a9c1e0b5d2f8a4c6e\n")
	bad := writeFile(t, "bad.yaml", "log:\n  level: loud\ninventory:\n  store: memory\n  reaper:\n    batch: 0\n")
	unparsable := writeFile(t, "unparsable.yaml", "inventory:\n  lisen: x\n  reaper: {interval: 5}\n")
	missing := filepath.Join(t.TempDir(), "missing.yaml")

	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   string // exact, unless contains is set
		stderr   string // exact, unless contains is set
		contains bool   // stdout and stderr are substrings
		noStdout bool
		noStderr bool
	}{
		{name: "no arguments", args: nil, code: 2, stderr: "Commands:", contains: true, noStdout: true},
		{name: "help", args: []string{"help"}, code: 0, stdout: "Commands:", contains: true, noStderr: true},
		{name: "-h", args: []string{"-h"}, code: 0, stdout: "Commands:", contains: true, noStderr: true},
		{name: "--help", args: []string{"--help"}, code: 0, stdout: "Commands:", contains: true, noStderr: true},
		{name: "unknown command", args: []string{"serv"}, code: 2, stderr: `waitroom: unknown command "serv"`, contains: true, noStdout: true},
		{name: "serve without a file", args: []string{"serve"}, code: 2, stderr: `waitroom serve: serve needs a configuration file (-c FILE), or --origin URL --gate PREFIX to run without one`, contains: true, noStdout: true},
		{name: "demo with a stray argument", args: []string{"demo", "extra"}, code: 2, contains: true, noStdout: true},
		{name: "help for a command", args: []string{"help", "check-config"}, code: 0, stdout: "Usage: waitroom check-config -c FILE", contains: true, noStderr: true},
		{name: "help for an unknown command", args: []string{"help", "nope"}, code: 2, stderr: `waitroom help: unknown command "nope"`, contains: true, noStdout: true},
		{name: "help for two commands", args: []string{"help", "a", "b"}, code: 2, stderr: "waitroom help: name one command, not 2", contains: true, noStdout: true},

		{name: "version", args: []string{"version"}, code: 0, stdout: version.String() + "\n", noStderr: true},
		{name: "version -h", args: []string{"version", "-h"}, code: 0, stdout: "Usage: waitroom version", contains: true, noStderr: true},
		{name: "version with an argument", args: []string{"version", "x"}, code: 2, stderr: `waitroom version: unexpected argument "x"`, contains: true, noStdout: true},
		{name: "version with a bad flag", args: []string{"version", "-json"}, code: 2, stderr: "waitroom version: flag provided but not defined: -json", contains: true, noStdout: true},

		{name: "check-config good", args: []string{"check-config", "-c", good}, code: 0, stdout: "configuration is valid\n", noStderr: true},
		{name: "check-config bad", args: []string{"check-config", "-c", bad}, code: 1, noStdout: true, stderr: bad + `:2: log.level: must be debug, info, warn or error (got "loud")
` + bad + `:3: inventory.api_token: set inventory.api_token (e.g. from ${WAITROOM_INVENTORY_TOKEN}) or insecure_no_auth: true
` + bad + `:4: inventory.store: must be embedded or redis (got "memory")
` + bad + `:6: inventory.reaper.batch: must be between 1 and 100000 (got 0)
`},
		{name: "check-config unparsable", args: []string{"check-config", "-c", unparsable}, code: 1, noStdout: true, stderr: unparsable + `:1: inventory.api_token: set inventory.api_token (e.g. from ${WAITROOM_INVENTORY_TOKEN}) or insecure_no_auth: true
` + unparsable + `:2: inventory.lisen: unknown key; did you mean listen?
` + unparsable + `:3: inventory.reaper.interval: invalid duration "5": want a number with a unit, such as 500ms, 1s or 24h
`},
		{name: "check-config missing file", args: []string{"check-config", "-c", missing}, code: 1, noStdout: true, stderr: "config: open " + missing + ": no such file or directory\n"},
		{name: "check-config without -c", args: []string{"check-config"}, code: 2, stderr: "waitroom check-config: missing -c FILE", contains: true, noStdout: true},
		{name: "check-config with a stray argument", args: []string{"check-config", "-c", good, "extra"}, code: 2, stderr: `unexpected argument "extra"`, contains: true, noStdout: true},
		{name: "check-config -h", args: []string{"check-config", "-h"}, code: 0, stdout: "-c FILE", contains: true, noStderr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := run(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			check := func(stream, got, want string, none bool) {
				t.Helper()
				switch {
				case none && got != "":
					t.Errorf("%s: want nothing, got:\n%s", stream, got)
				case want == "":
				case tt.contains && !strings.Contains(got, want):
					t.Errorf("%s lacks %q:\n%s", stream, want, got)
				case !tt.contains && got != want:
					t.Errorf("%s:\n%s\nwant:\n%s", stream, got, want)
				}
			}
			check("stdout", stdout, tt.stdout, tt.noStdout)
			check("stderr", stderr, tt.stderr, tt.noStderr)
		})
	}
}

// TestUsageListsTheTable checks that the command list is the table.
func TestUsageListsTheTable(t *testing.T) {
	t.Parallel()
	_, stdout, _ := run(t, "help")
	for name, c := range commands {
		if !strings.Contains(stdout, "  "+name+" ") || !strings.Contains(stdout, c.summary) {
			t.Errorf("usage lacks %s (%s):\n%s", name, c.summary, stdout)
		}
	}
	for _, name := range []string{"check-config", "help", "version"} {
		if _, ok := commands[name]; !ok {
			t.Errorf("command %s is not registered", name)
		}
	}
}

// TestEveryCommandHasHelp runs COMMAND -h for every command in the table.
func TestEveryCommandHasHelp(t *testing.T) {
	t.Parallel()
	for name := range commands {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := run(t, name, "-h")
			if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage: waitroom "+name) {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
		})
	}
}

func TestRegisterRefuses(t *testing.T) {
	t.Parallel()
	ok := func(context.Context, []string, stdio) int { return 0 }
	for name, c := range map[string]command{
		"duplicate": {name: "version", summary: "again", run: ok},
		"no name":   {summary: "s", run: ok},
		"flag-like": {name: "-x", summary: "s", run: ok},
		"no run":    {name: "zz-test", summary: "s"},
		"no text":   {name: "zz-test", run: ok},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: register did not panic", name)
				}
			}()
			register(c)
		}()
	}
}

// TestCheckConfigExamples checks the example files the way a user would,
// with the variables they reference in the environment, and without.
func TestCheckConfigExamples(t *testing.T) {
	t.Setenv("WAITROOM_INVENTORY_TOKEN", "7f3a9c1e0b5d2f8a4c6e91d0b2a57e3f")
	t.Setenv("REDIS_PASSWORD", "redis-password")
	files, _ := filepath.Glob("../../../../configs/inventory*.yaml")
	if len(files) == 0 {
		t.Fatal("no example configs")
	}
	for _, file := range files {
		code, stdout, stderr := run(t, "check-config", "-c", file)
		if code != 0 || stdout != "configuration is valid\n" || stderr != "" {
			t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", file, code, stdout, stderr)
		}
	}

	os.Unsetenv("WAITROOM_INVENTORY_TOKEN")
	code, _, stderr := run(t, "check-config", "-c", "../../../../configs/inventory.yaml")
	if code != 1 || !strings.Contains(stderr, "environment variable WAITROOM_INVENTORY_TOKEN is not set") {
		t.Errorf("without the token: exit %d\n%s", code, stderr)
	}
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	c, err := loadConfig("")
	if err != nil || !reflect.DeepEqual(c, config.Default()) {
		t.Errorf(`loadConfig(""): %+v, %v`, c, err)
	}

	good := writeFile(t, "good.yaml", "log:\n  level: debug\ninventory:\n  insecure_no_auth: true\n")
	c, err = loadConfig(good)
	if err != nil || c.Log.Level != config.LevelDebug || !c.Inventory.InsecureNoAuth {
		t.Errorf("loadConfig(good): %+v, %v", c, err)
	}

	invalid := writeFile(t, "invalid.yaml", "log:\n  level: loud\n  format: json\ninventory:\n  insecure_no_auth: true\n")
	c, err = loadConfig(invalid)
	ps := config.Problems(err)
	if c != nil || len(ps) != 1 || ps[0].File != invalid || ps[0].Path != "log.level" {
		t.Errorf("loadConfig(invalid): %+v, %v", c, err)
	}
}

func TestNewLogger(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := newLogger(config.Log{Level: config.LevelWarn, Format: config.FormatJSON}, &buf)
	log.Info("hidden")
	log.Warn("shown", "k", 1)
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("not one JSON object: %q: %v", buf.String(), err)
	}
	if rec["msg"] != "shown" || rec["level"] != "WARN" || rec["k"] != 1.0 {
		t.Errorf("got %v", rec)
	}

	buf.Reset()
	log = newLogger(config.Log{Level: config.LevelDebug, Format: config.FormatText}, &buf)
	log.Debug("hello", "k", "v")
	if got := buf.String(); !strings.Contains(got, "level=DEBUG msg=hello k=v") {
		t.Errorf("got %q", got)
	}

	buf.Reset()
	log = newLogger(config.Log{}, &buf)
	log.Debug("hidden")
	log.Info("shown")
	if got := buf.String(); strings.Contains(got, "hidden") || !strings.Contains(got, "level=INFO msg=shown") {
		t.Errorf("zero Log: got %q", got)
	}
}

// TestCheckConfigRouteTable: check-config prints the route table the
// proxy builds, so an operator sees what is gated.
func TestCheckConfigRouteTable(t *testing.T) {
	dir := t.TempDir()
	cfg := writeIn(t, dir, "waitroom.yaml", startConfig(t, dir, "", "")+`
events:
  - id: show
    on_sale_at: 2027-03-01T10:00:00Z
routes:
  - prefix: /events/
    event: show
    action: queue
  - glob: /api/*/checkout
    event: show
    action: block
    case_sensitive: true
unmatched:
  action: block
  event: show
`)
	code, stdout, stderr := run(t, "check-config", "-c", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"configuration is valid\n",
		"/_wr/ and below",
		"prefix /events/ (and /events)  ignored",
		"glob /api/*/checkout",
		"exact    block",
		"any other path",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
}
