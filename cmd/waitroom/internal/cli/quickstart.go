package cli

// The quickstart: waitroom serve --origin URL --gate PREFIX runs without
// a configuration file, and waitroom init writes the same configuration
// as a file to grow. config.Quickstart renders it; this file adds the
// flags, the data directory and its secret files.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/fsutil"
)

// Files in the quickstart's data directory.
const (
	signingKeyFile   = "signing.key"
	adminTokenFile   = "admin.token"
	challengeKeyFile = "challenge.key"
)

// gateFlags is a repeatable --gate flag.
type gateFlags []string

func (g *gateFlags) String() string { return strings.Join(*g, ",") }

func (g *gateFlags) Set(v string) error {
	*g = append(*g, v)
	return nil
}

// quickstartFlags are the flags serve and init share.
type quickstartFlags struct {
	origin, listen, admin, dataDir, name string
	gates                                gateFlags
}

func (f *quickstartFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.origin, "origin", "", "your site's `URL`, http://host:port or https://host:port")
	fs.Var(&f.gates, "gate", "a path `PREFIX` that gets the waiting room, such as /checkout/ (repeat for more)")
	fs.StringVar(&f.listen, "listen", "", "`ADDR`ess visitors connect to, host:port (default "+config.DefaultServeListen+")")
	fs.StringVar(&f.admin, "admin", "", "loopback `ADDR`ess of the operator API (default "+config.DefaultAdminListen+")")
	fs.StringVar(&f.dataDir, "data-dir", "", "`DIR`ectory of the queues and secrets (default "+config.DefaultQuickstartDataDir+")")
	fs.StringVar(&f.name, "name", "", "the sale's `NAME` on the waiting-room page")
}

// set reports whether any quickstart flag was given.
func (f *quickstartFlags) set(fs *flag.FlagSet) bool {
	for _, n := range []string{"origin", "gate", "listen", "admin", "data-dir", "name"} {
		if flagSet(fs, n) {
			return true
		}
	}
	return false
}

func (f *quickstartFlags) quickstart() config.Quickstart {
	return config.Quickstart{Origin: f.origin, Gates: f.gates, Listen: f.listen, AdminListen: f.admin,
		DataDir: f.dataDir, Name: f.name}
}

// commandLine is the command line that makes the same configuration, for
// the file's first comment and the start-up message.
func (f *quickstartFlags) commandLine(cmd string) string {
	var b strings.Builder
	b.WriteString("waitroom " + cmd + " --origin " + f.origin)
	for _, g := range f.gates {
		b.WriteString(" --gate " + g)
	}
	for _, kv := range [][2]string{{"listen", f.listen}, {"admin", f.admin}, {"data-dir", f.dataDir}} {
		if kv[1] != "" {
			b.WriteString(" --" + kv[0] + " " + kv[1])
		}
	}
	if f.name != "" {
		fmt.Fprintf(&b, " --name %q", f.name)
	}
	return b.String()
}

// badFlags reports q's problems as a usage error.
func badFlags(fs *flag.FlagSet, s stdio, err error) int {
	for _, p := range config.Problems(err) {
		fmt.Fprintf(s.stderr, "%s: %s\n", fs.Name(), p)
	}
	fmt.Fprintln(s.stderr)
	printHelp(fs, s.stderr)
	return exitUsage
}

// quickstartSecrets are the secrets serve --origin keeps in its data
// directory, and which of them it made just now.
type quickstartSecrets struct {
	signing, admin     string
	challenge          string
	newAdmin, newFiles bool
}

// lookup gives the quickstart configuration's variables their values
// from the files; every other variable is unset.
func (q *quickstartSecrets) lookup(name string) (string, bool) {
	switch name {
	case config.EnvSigningSecret:
		return q.signing, true
	case config.EnvAdminToken:
		return q.admin, true
	case config.EnvChallengeSecret:
		return q.challenge, true
	}
	return "", false
}

// openDataDir creates dir (0700) when missing and reads or makes the
// secret files in it (0600, 32 random bytes in hex each): made once, then
// reused at every start, so that passes and the admin token survive a
// restart.
func openDataDir(dir string) (*quickstartSecrets, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("--data-dir %s: %w", dir, err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("--data-dir %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("--data-dir %s: not a directory", dir)
	}
	var q quickstartSecrets
	var created bool
	if q.signing, created, err = secretFile(dir, signingKeyFile); err != nil {
		return nil, err
	}
	q.newFiles = created
	if q.admin, q.newAdmin, err = secretFile(dir, adminTokenFile); err != nil {
		return nil, err
	}
	q.newFiles = q.newFiles || q.newAdmin
	if q.challenge, created, err = secretFile(dir, challengeKeyFile); err != nil {
		return nil, err
	}
	q.newFiles = q.newFiles || created
	return &q, nil
}

// secretFile returns the secret in dir/name, making it first when the
// file does not exist. The new file appears whole or not at all (written
// beside it, then linked into place, which fails if another process made
// it first: then that one's is read). A file others may read is refused.
func secretFile(dir, name string) (secret string, created bool, err error) {
	path := filepath.Join(dir, name)
	b, err := readSecretFile(path)
	if err == nil {
		return b, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", false, fmt.Errorf("making %s: %w", path, err)
	}
	secret = hex.EncodeToString(raw)
	tmp := fmt.Sprintf("%s.%d%s", name, os.Getpid(), fsutil.TempSuffix)
	if err := fsutil.WriteFile(dir, tmp, func(w io.Writer) error {
		_, err := io.WriteString(w, secret+"\n")
		return err
	}); err != nil {
		return "", false, fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(filepath.Join(dir, tmp))
	if err := os.Link(filepath.Join(dir, tmp), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			b, err := readSecretFile(path)
			return b, false, err
		}
		return "", false, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := fsutil.SyncDir(dir); err != nil {
		return "", false, fmt.Errorf("writing %s: %w", path, err)
	}
	return secret, true, nil
}

// readSecretFile reads a secret file: at least 32 characters on one line,
// readable by its owner only.
func readSecretFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s can be read by others (mode %04o): chmod 600 %s", path, st.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if len(s) < 32 || strings.ContainsAny(s, " \t\r\n") {
		return "", fmt.Errorf("%s must hold one secret of at least 32 characters (remove it to have a new one made; passes signed with the old one stop working)", path)
	}
	return s, nil
}
