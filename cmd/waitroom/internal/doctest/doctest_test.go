package doctest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/cli"
)

// asBinary, set in the environment, makes the test binary run as waitroom:
// the shell blocks call it through a wrapper script named waitroom.
const asBinary = "WAITROOM_DOCTEST_AS_BINARY"

func TestMain(m *testing.M) {
	if os.Getenv(asBinary) == "1" {
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// readmeMaxLines is how long the README may grow: it is the front door,
// and everything else belongs in docs/.
const readmeMaxLines = 220

// secretVars are the variables the documented configurations and shell
// blocks take their secrets from; each gets a fresh random value.
var secretVars = []string{
	"WAITROOM_SIGNING_SECRET",
	"WAITROOM_ADMIN_TOKEN",
	"WAITROOM_INVENTORY_TOKEN",
	"WAITROOM_CHALLENGE_SECRET",
	"WAITROOM_PRESALE_INVITE_SECRET",
	"WAITROOM_BYPASS_SECRET",
	"WAITROOM_TURNSTILE_SITE_KEY",
	"WAITROOM_TURNSTILE_SECRET",
	"WAITROOM_WEBHOOK_SECRET",
	"WAITROOM_IDENTITY_SECRET",
	"REDIS_PASSWORD",
}

// root returns the module's root folder.
func root(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}

// documents lists the Markdown files the test keeps true, relative to
// the root: README.md, configs/README.md and docs/*.md.
func documents(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md", filepath.Join("configs", "README.md")}
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		files = append(files, rel)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md found")
	}
	return files
}

// environ is the environment of the shell blocks and of check-config:
// the process's own, without the secrets the documents name, which get
// fresh random values, and with bin first on PATH.
func environ(bin string) []string {
	env := []string{}
	drop := map[string]bool{asBinary: true, "PATH": true}
	for _, v := range secretVars {
		drop[v] = true
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !drop[name] {
			env = append(env, kv)
		}
	}
	for _, v := range secretVars {
		b := make([]byte, 32)
		rand.Read(b)
		env = append(env, v+"="+hex.EncodeToString(b))
	}
	return append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// waitroomBin writes a script named waitroom that runs this test binary
// as the waitroom command, and returns its folder.
func waitroomBin(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\n%s=1 exec '%s' \"$@\"\n", asBinary, self)
	if err := os.WriteFile(filepath.Join(dir, "waitroom"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestExamples checks every fenced block of every document: YAML
// configurations pass check-config, runnable shell blocks exit 0, blocks
// that do not run say why, JSON parses.
func TestExamples(t *testing.T) {
	rootDir := root(t)
	bin := waitroomBin(t)
	env := environ(bin)
	for _, file := range documents(t, rootDir) {
		t.Run(filepath.ToSlash(file), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(rootDir, file))
			if err != nil {
				t.Fatal(err)
			}
			work := t.TempDir()
			if err := os.Symlink(filepath.Join(rootDir, "configs"), filepath.Join(work, "configs")); err != nil {
				t.Fatal(err)
			}
			blocks, _ := parse(string(data))
			for _, b := range blocks {
				checkBlock(t, file, b, work, bin, env)
			}
		})
	}
}

// checkBlock checks one block in the document's working directory; bin
// is the folder of the waitroom command, env the environment.
func checkBlock(t *testing.T, file string, b block, work, bin string, env []string) {
	t.Helper()
	where := b.where(filepath.ToSlash(file))
	switch b.lang {
	case "yaml", "yml":
		name, ok := checkConfigFile(b.info)
		if !ok {
			t.Errorf("%s: a yaml block must be a configuration marked `check-config` (optionally `file=NAME`), got %q", where, b.info)
			return
		}
		keep := name != ""
		if !keep {
			name = fmt.Sprintf(".block-%d.yaml", b.line)
		}
		path := filepath.Join(work, name)
		if err := os.WriteFile(path, []byte(b.text), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := run(work, env, filepath.Join(bin, "waitroom"), "check-config", "-c", path)
		if err != nil || !strings.HasPrefix(out, "configuration is valid\n") {
			t.Errorf("%s: waitroom check-config refuses the configuration (%v):\n%s", where, err, out)
		}
		if !keep {
			os.Remove(path)
		}
	case "sh":
		switch {
		case b.info == "run":
			if out, err := run(work, env, "sh", "-eu", "-c", b.text); err != nil {
				t.Errorf("%s: the shell block failed (%v):\n%s\n--- output:\n%s", where, err, b.text, out)
			}
		case strings.HasPrefix(b.info, "no-run:") && strings.TrimSpace(strings.TrimPrefix(b.info, "no-run:")) != "":
		default:
			t.Errorf("%s: a sh block must be marked `run` or `no-run: REASON`, got %q", where, b.info)
		}
	case "bash", "shell", "console", "shell-session", "zsh":
		t.Errorf("%s: write shell blocks as ```sh run or ```sh no-run: REASON, not %q", where, b.lang)
	case "json":
		dec := json.NewDecoder(strings.NewReader(b.text))
		n := 0
		for {
			var v any
			err := dec.Decode(&v)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Errorf("%s: JSON value %d does not parse: %v", where, n+1, err)
				break
			}
			n++
		}
		if n == 0 {
			t.Errorf("%s: an empty json block", where)
		}
	case "text", "go", "mermaid", "":
		if b.lang == "" {
			t.Errorf("%s: name the block's language (text for output)", where)
		}
	default:
		t.Errorf("%s: a %q block: doctest does not know how to check it; use text, or teach doc.go and this test", where, b.lang)
	}
}

// checkConfigFile reads a yaml block's info string: "check-config" or
// "check-config file=NAME".
func checkConfigFile(info string) (name string, ok bool) {
	words := strings.Fields(info)
	if len(words) == 0 || words[0] != "check-config" || len(words) > 2 {
		return "", false
	}
	if len(words) == 2 {
		name, ok = strings.CutPrefix(words[1], "file=")
		if !ok || name == "" || strings.ContainsAny(name, `/\`) {
			return "", false
		}
	}
	return name, true
}

// run runs a command in dir with env and returns its combined output.
func run(dir string, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

// TestLinks checks that every relative link names a file or folder of the
// repository, and that its #fragment names a heading there.
func TestLinks(t *testing.T) {
	t.Parallel()
	rootDir := root(t)
	for _, file := range documents(t, rootDir) {
		data, err := os.ReadFile(filepath.Join(rootDir, file))
		if err != nil {
			t.Fatal(err)
		}
		_, prose := parse(string(data))
		targets, lines := links(prose)
		for i, target := range targets {
			where := fmt.Sprintf("%s:%d", filepath.ToSlash(file), lines[i])
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			full := filepath.Join(rootDir, file) // a bare #fragment is in the same file
			if path != "" {
				full = filepath.Join(rootDir, filepath.Dir(file), filepath.FromSlash(path))
				rel, err := filepath.Rel(rootDir, full)
				if err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("%s: %s points outside the repository", where, target)
					continue
				}
			}
			info, err := os.Stat(full)
			if err != nil {
				t.Errorf("%s: %s: %v", where, target, err)
				continue
			}
			if frag == "" {
				continue
			}
			if info.IsDir() || !strings.HasSuffix(full, ".md") {
				t.Errorf("%s: %s: a fragment only works on a Markdown file", where, target)
				continue
			}
			doc, err := os.ReadFile(full)
			if err != nil {
				t.Fatal(err)
			}
			if !anchors(string(doc))[frag] {
				t.Errorf("%s: %s: no heading makes the anchor #%s", where, target, frag)
			}
		}
	}
}

// TestREADMELength keeps the README a front door.
func TestREADMELength(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, want at most %d: move the detail into docs/", n, readmeMaxLines)
	}
}
