package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinary builds waitroom the way a release is built, with the version
// set by the linker, and checks the exit codes a script would see.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build with")
	}
	bin := filepath.Join(t.TempDir(), "waitroom")
	const pkg = "github.com/waitroom/waitroom/cmd/waitroom/internal/version"
	build := exec.Command(gobin, "build", "-o", bin, "-ldflags",
		"-X "+pkg+".Version=v9.8.7 -X "+pkg+".Commit=0123456789abcdef0123456789abcdef01234567 -X "+pkg+".Date=2026-01-02T03:04:05Z",
		".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	good := filepath.Join(t.TempDir(), "good.yaml")
	if err := os.WriteFile(good, []byte("inventory:\n  api_token: ${WAITROOM_MAIN_TEST_TOKEN}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args   []string
		env    []string
		code   int
		stdout string
	}{
		{[]string{"version"}, nil, 0, "waitroom v9.8.7 (commit 0123456789ab, built 2026-01-02T03:04:05Z, go"},
		{nil, nil, 2, ""},
		{[]string{"nope"}, nil, 2, ""},
		{[]string{"check-config", "-c", good}, []string{"WAITROOM_MAIN_TEST_TOKEN=7f3a9c1e0b5d2f8a4c6e"}, 0, "configuration is valid\n"},
		{[]string{"check-config", "-c", good}, nil, 1, ""},
	}
	for _, tt := range tests {
		cmd := exec.Command(bin, tt.args...)
		cmd.Env = append(os.Environ(), tt.env...)
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.code || !strings.HasPrefix(stdout.String(), tt.stdout) {
			t.Errorf("waitroom %v: exit %d, stdout %q; want %d, %q", tt.args, code, stdout.String(), tt.code, tt.stdout)
		}
	}
}
