package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"net"
	"path/filepath"
	"strings"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/app"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

func init() {
	register(command{name: "serve", summary: "run the waiting-room proxy in front of your origin (-c FILE, or --origin URL --gate PREFIX)", run: runServe})
}

const serveHelp = `Usage: waitroom serve -c FILE
       waitroom serve --origin URL --gate PREFIX [--gate PREFIX ...] [--listen ADDR] [--admin ADDR] [--data-dir DIR]

Runs waitroom in front of the origins the file names: routes gated by
events, the waiting room, the waiting-room API under serve.prefix (/_wr),
the auth_request endpoint, and the operator API on admin.listen. With
serve.with_inventory it also runs the seat-hold sidecar of the inventory
section. See configs/ for commented examples; check a file first with
waitroom check-config -c FILE.

Without a file, --origin and --gate put the site at URL behind a waiting
room on the gated path prefixes, in threshold mode (visitors pass
straight through until the site is busy, then queue); every other path
passes straight through. The queues live in the data directory, and so
do the signing and challenge keys and the operator API's token (mode
0600), made on the first start and reused after: the token is printed
once, when it is made. waitroom init writes the same configuration as a file to grow.

It stops gracefully on SIGINT or SIGTERM: listeners close, requests in
flight get serve.shutdown_grace to finish. SIGHUP (or POST
/admin/v1/reload) reads the file again and applies it without a restart;
a file with problems is refused whole and its problems logged (see
docs/operations.md).
`

func runServe(ctx context.Context, args []string, s stdio) int {
	fs := newFlags("serve", serveHelp)
	path := fs.String("c", "", "configuration `FILE`")
	var qf quickstartFlags
	qf.register(fs)
	if code, done := parseFlags(fs, args, s); done {
		return code
	}
	if code, done := noArgs(fs, s); done {
		return code
	}
	quick := qf.set(fs)
	var cfg *config.Config
	var banner func(*app.Waitroom)
	switch {
	case *path != "" && quick:
		return badUsage(fs, s, "-c FILE and the --origin flags are two ways to configure serve: use one (waitroom init turns the flags into a file)")
	case *path != "":
		var err error
		if cfg, err = config.Check(*path, config.RoleProxy); err != nil {
			printProblems(s, err)
			return exitError
		}
	case quick:
		var code int
		if cfg, banner, code = quickstartServe(fs, &qf, s); cfg == nil {
			return code
		}
	default:
		return badUsage(fs, s, "serve needs a configuration file (-c FILE), or --origin URL --gate PREFIX to run without one")
	}
	log := newLogger(cfg.Log, s.stderr)
	w, err := app.NewServe(ctx, cfg, log, app.Listeners{})
	if err != nil {
		if quick {
			err = flagNames{err}
		}
		startFailed(s, err)
		return exitError
	}
	if banner != nil {
		banner(w)
	}
	w.ConfigFile = *path
	defer onHangup(ctx, w)()
	if err := w.Run(ctx); err != nil {
		log.Error("waitroom stopped", "err", err)
		return exitError
	}
	return exitOK
}

// quickstartServe makes the configuration of serve --origin: the flags
// checked, the data directory and its secrets ready, the quickstart text
// loaded and validated as a file would be. It returns nil and the exit
// code on failure, else the configuration and what to print once the
// listeners are open.
func quickstartServe(fs *flag.FlagSet, qf *quickstartFlags, s stdio) (*config.Config, func(*app.Waitroom), int) {
	q := qf.quickstart()
	if err := q.Check(); err != nil {
		return nil, nil, badFlags(fs, s, err)
	}
	dir, err := filepath.Abs(cmp.Or(q.DataDir, config.DefaultQuickstartDataDir))
	if err != nil {
		startFailed(s, err)
		return nil, nil, exitError
	}
	q.DataDir = dir
	secrets, err := openDataDir(dir)
	if err != nil {
		startFailed(s, err)
		return nil, nil, exitError
	}
	text, err := q.YAML(qf.commandLine("serve"))
	if err == nil {
		var cfg *config.Config
		if cfg, err = config.Parse(text, secrets.lookup); err == nil {
			if err = config.ValidateFor(cfg, config.RoleProxy); err == nil {
				return cfg, func(w *app.Waitroom) { quickstartBanner(s, qf, &q, secrets, w) }, exitOK
			}
		}
	}
	printProblems(s, config.InFile("the --origin configuration", err))
	return nil, nil, exitError
}

// quickstartBanner tells the operator where everything is: the URLs, the
// data directory, the admin token when it was just made (never again),
// and how to turn the flags into a file.
func quickstartBanner(s stdio, qf *quickstartFlags, q *config.Quickstart, sec *quickstartSecrets, w *app.Waitroom) {
	var b strings.Builder
	verb := "gets"
	if len(q.Gates) > 1 {
		verb = "get"
	}
	fmt.Fprintf(&b, "waitroom: in front of %s; %s %s the waiting room (threshold mode: it queues only while the site is busy), every other path passes straight through\n",
		q.Origin, strings.Join(q.Gates, " and "), verb)
	fmt.Fprintf(&b, "  visitors:  %s\n", httpURL(w.Addr(), "/"))
	if a := w.AdminAddr(); a != nil {
		fmt.Fprintf(&b, "  admin API: %s (Authorization: Bearer <token in %s>)\n", httpURL(a, "/"), filepath.Join(q.DataDir, adminTokenFile))
	}
	fmt.Fprintf(&b, "  data:      %s (queues, signing key, challenge key and admin token: keep it, and keep it private)\n", q.DataDir)
	if sec.newAdmin {
		fmt.Fprintf(&b, "  admin token (shown this once): %s\n", sec.admin)
	}
	fmt.Fprintf(&b, "  to grow this into a file: %s -o waitroom.yaml\n", qf.commandLine("init"))
	fmt.Fprint(s.stderr, b.String())
}

// flagNames is a start-up error of serve --origin, which names the flag
// rather than the configuration key it set: "--listen 127.0.0.1:8080:
// address already in use".
type flagNames struct{ err error }

func (f flagNames) Error() string {
	msg := app.OneLine(f.err)
	for key, flag := range map[string]string{"serve.listen ": "--listen ", "admin.listen ": "--admin ", "admission.data_dir ": "--data-dir "} {
		if rest, ok := strings.CutPrefix(msg, key); ok {
			return flag + rest
		}
	}
	return msg
}

func (f flagNames) Unwrap() error { return f.err }

// httpURL is http://addr/path, with a wildcard host shown as 127.0.0.1.
func httpURL(a net.Addr, path string) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String() + path
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + path
}

// startFailed reports a start-up error: one line, "waitroom: " and the
// setting that failed with the cause ("waitroom: serve.listen
// 127.0.0.1:8080: address already in use").
func startFailed(s stdio, err error) {
	msg := app.OneLine(err)
	if !strings.HasPrefix(msg, "waitroom") {
		msg = "waitroom: " + msg
	}
	fmt.Fprintln(s.stderr, msg)
}
