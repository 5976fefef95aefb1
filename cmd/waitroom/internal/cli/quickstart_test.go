package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

// TestQuickstartCommandLines: serve --origin and init check their flags
// strictly, as usage errors (exit 2) naming each bad flag.
func TestQuickstartCommandLines(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "x.yaml", "log: {level: info}\n")
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"serve with neither", []string{"serve"}, 2, []string{"serve needs a configuration file (-c FILE), or --origin URL --gate PREFIX"}},
		{"serve with both", []string{"serve", "-c", file, "--origin", "http://127.0.0.1:3000", "--gate", "/c/"}, 2, []string{"-c FILE and the --origin flags are two ways"}},
		{"serve without a gate", []string{"serve", "--origin", "http://127.0.0.1:3000"}, 2, []string{"waitroom serve: --gate: give at least one path prefix"}},
		{"serve with a gate only", []string{"serve", "--gate", "/checkout/"}, 2, []string{"waitroom serve: --origin: is required"}},
		{"serve with bad flags", []string{"serve", "--origin", "127.0.0.1:3000", "--gate", "checkout", "--admin", "0.0.0.0:9090", "--listen", "x"}, 2, []string{
			`--origin: "127.0.0.1:3000" must start with http:// or https://`,
			`--gate: "checkout" must be a path starting with a single /`,
			`--listen: "x" is not host:port`,
			`--admin: "0.0.0.0:9090" is not a loopback address`,
			"Usage: waitroom serve"}},
		{"init with bad flags", []string{"init", "--origin", "ftp://h", "--gate", "/a b"}, 2, []string{
			`--origin: "ftp://h" must start with http:// or https://`, `--gate: "/a b" has ' '`, "Usage: waitroom init"}},
		{"init -o ''", []string{"init", "--origin", "http://h", "--gate", "/c/", "-o", ""}, 2, []string{"-o needs a file name"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := run(t, tt.args...)
			if code != tt.code || stdout != "" {
				t.Errorf("exit %d, stdout %q; want %d and nothing", code, stdout, tt.code)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
}

// TestInitToStdout: init -o - writes the quickstart text, which
// check-config's loader accepts with the secrets set.
func TestInitToStdout(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := run(t, "init", "--origin", "https://shop.example.com", "--gate", "/checkout/", "--name", "Summer sale", "-o", "-")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sec, err := openDataDir(t.TempDir()) // random secrets
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.CheckData([]byte(stdout), sec.lookup, config.RoleProxy)
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if c.Events[0].Mode != config.ModeThreshold || c.Events[0].Name != "Summer sale" || !c.Origins[0].TLS ||
		c.Origins[0].Addresses[0] != "shop.example.com:443" {
		t.Errorf("init wrote %+v", c)
	}
	if !strings.Contains(stdout, "Made by: waitroom init --origin https://shop.example.com --gate /checkout/ --name \"Summer sale\"") {
		t.Errorf("the file does not say how it was made:\n%s", stdout)
	}
}

// TestDataDirSecrets: the secrets are made once (0600 in a 0700
// directory) and read back after; a file others can read, or one that
// holds no usable secret, is refused rather than used or replaced.
func TestDataDirSecrets(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	first, err := openDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !first.newAdmin || !first.newFiles || len(first.signing) != 64 || len(first.admin) != 64 || len(first.challenge) != 64 ||
		first.signing == first.admin || first.challenge == first.signing || first.challenge == first.admin {
		t.Fatalf("first start: %+v", first)
	}
	st, _ := os.Stat(dir)
	if st.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %04o", st.Mode().Perm())
	}
	for _, f := range []string{signingKeyFile, adminTokenFile, challengeKeyFile} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, st.Mode(), err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("left behind: %v", entries)
	}
	again, err := openDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if again.newAdmin || again.newFiles || again.signing != first.signing || again.admin != first.admin {
		t.Fatalf("second start made new secrets: %+v", again)
	}
	v, ok := again.lookup(config.EnvAdminToken)
	if !ok || v != first.admin {
		t.Error("lookup does not give the admin token")
	}
	if _, ok := again.lookup("HOME"); ok {
		t.Error("lookup gives a variable that is not the quickstart's")
	}

	os.Chmod(filepath.Join(dir, adminTokenFile), 0o644)
	if _, err := openDataDir(dir); err == nil || !strings.Contains(err.Error(), "can be read by others") {
		t.Errorf("a readable token file: %v", err)
	}
	os.Chmod(filepath.Join(dir, adminTokenFile), 0o600)
	os.WriteFile(filepath.Join(dir, signingKeyFile), []byte("short\n"), 0o600)
	if _, err := openDataDir(dir); err == nil || !strings.Contains(err.Error(), "at least 32 characters") {
		t.Errorf("a short signing key: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, signingKeyFile)); string(b) != "short\n" {
		t.Error("a bad secret file was replaced")
	}
	notDir := writeFile(t, "file", "")
	if _, err := openDataDir(notDir); err == nil {
		t.Error("a file as the data directory")
	}
}

// TestQuickstartStartFailure: serve --origin names the flag, not the
// configuration key, when a listener cannot open.
func TestQuickstartStartFailure(t *testing.T) {
	t.Parallel()
	busy := busyAddr(t)
	for _, tt := range []struct{ flag, want string }{
		{"--listen", "waitroom: --listen " + busy + ": address already in use"},
		{"--admin", "waitroom: --admin " + busy + ": address already in use"},
	} {
		args := []string{"serve", "--origin", "http://127.0.0.1:3000", "--gate", "/checkout/",
			"--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", tt.flag, busy}
		code, stdout, stderr := run(t, args...)
		checkStartFailure(t, code, stdout, stderr, tt.want)
	}
}
