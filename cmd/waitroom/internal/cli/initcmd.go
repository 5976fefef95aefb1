package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

func init() {
	register(command{name: "init", summary: "write a commented configuration for your site (--origin URL --gate PREFIX)", run: runInit})
}

const initHelp = `Usage: waitroom init --origin URL --gate PREFIX [--gate PREFIX ...] [-o FILE] [--force]
                     [--listen ADDR] [--admin ADDR] [--data-dir DIR] [--name NAME]

Writes the configuration that waitroom serve --origin runs with the same
flags, as a commented YAML file to grow: one origin, a waiting room in
threshold mode on the gated path prefixes, every other path passed
straight through, the queues embedded in the data directory, the
operator API on loopback. Secrets are not in the file: they come from
the environment (WAITROOM_SIGNING_SECRET, WAITROOM_ADMIN_TOKEN), and the
file's first lines and this command's output say how to make them.

It never overwrites a file unless --force is given; -o - writes to
standard output.
`

func runInit(_ context.Context, args []string, s stdio) int {
	fs := newFlags("init", initHelp)
	var qf quickstartFlags
	qf.register(fs)
	out := fs.String("o", "waitroom.yaml", "the `FILE` to write, or - for standard output")
	force := fs.Bool("force", false, "overwrite FILE if it exists")
	if code, done := parseFlags(fs, args, s); done {
		return code
	}
	if code, done := noArgs(fs, s); done {
		return code
	}
	if *out == "" {
		return badUsage(fs, s, "-o needs a file name, or - for standard output")
	}
	q := qf.quickstart()
	if err := q.Check(); err != nil {
		return badFlags(fs, s, err)
	}
	text, err := q.YAML(qf.commandLine("init"))
	if err != nil {
		return badFlags(fs, s, err)
	}
	if *out == "-" {
		s.stdout.Write(text)
		return exitOK
	}
	if err := writeNew(*out, text, *force); err != nil {
		fmt.Fprintf(s.stderr, "waitroom init: %v\n", err)
		return exitError
	}
	fmt.Fprint(s.stderr, initNextSteps(*out, &q))
	return exitOK
}

// writeNew writes data to path (mode 0644: it holds no secret), refusing
// to replace an existing file unless force.
func writeNew(path string, data []byte, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists; init never overwrites a file without --force (or choose another -o)", path)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// initNextSteps says what to do with the file: make the secrets (or
// reuse the ones serve --origin made in the same data directory), check
// it, run it.
func initNextSteps(path string, q *config.Quickstart) string {
	var b strings.Builder
	fmt.Fprintf(&b, "waitroom init: wrote %s. Next:\n", path)
	dir := q.DataDir
	if dir == "" {
		dir = config.DefaultQuickstartDataDir
	}
	signing, admin, challenge := filepath.Join(dir, signingKeyFile), filepath.Join(dir, adminTokenFile), filepath.Join(dir, challengeKeyFile)
	if _, err := os.Stat(signing); err == nil {
		fmt.Fprintf(&b, "  # keep the secrets waitroom serve --origin made in %s:\n", dir)
		fmt.Fprintf(&b, "  export %s=\"$(cat %s)\"\n", config.EnvSigningSecret, signing)
		fmt.Fprintf(&b, "  export %s=\"$(cat %s)\"\n", config.EnvAdminToken, admin)
		fmt.Fprintf(&b, "  export %s=\"$(cat %s)\"\n", config.EnvChallengeSecret, challenge)
	} else {
		fmt.Fprintf(&b, "  export %s=\"$(openssl rand -hex 32)\"   # keep it: passes survive restarts\n", config.EnvSigningSecret)
		fmt.Fprintf(&b, "  export %s=\"$(openssl rand -hex 32)\"\n", config.EnvAdminToken)
		fmt.Fprintf(&b, "  export %s=\"$(openssl rand -hex 32)\"\n", config.EnvChallengeSecret)
	}
	fmt.Fprintf(&b, "  waitroom check-config -c %s\n", path)
	fmt.Fprintf(&b, "  waitroom serve -c %s\n", path)
	return b.String()
}
