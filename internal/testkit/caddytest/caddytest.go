package caddytest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/proctest"
)

// Options configure a server.
type Options struct {
	// Dir holds the Caddyfile, the pid file, the log and Caddy's data; a
	// test directory when "" (Start) and required for Launch.
	Dir string
	// Site is the inside of the one site block (the directives for
	// http://127.0.0.1:port), e.g. a forward_auth and a reverse_proxy.
	Site string
}

// Server is a running Caddy.
type Server struct {
	// Addr is the 127.0.0.1:port Caddy listens on.
	Addr string
	Dir  string
	proc *proctest.Proc
}

// Binary returns the path of caddy, or an error telling how to get it.
func Binary() (string, error) { return proctest.Binary("caddy", "/usr/bin/caddy") }

// Start runs Caddy with opts and stops it when the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	return proctest.InTest(tb, &opts.Dir, func() (*Server, error) { return Launch(opts) })
}

// Launch runs Caddy with opts on a free port; the caller stops it.
func Launch(opts Options) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		return nil, errors.New("caddytest: Launch needs a directory")
	}
	return launch(bin, opts, 5)
}

// launch tries up to attempts free ports (a port can be taken between
// being picked and Caddy binding it).
func launch(bin string, opts Options, attempts int) (*Server, error) {
	var s *Server
	err := proctest.OnFreePorts("caddy", attempts, func(port int) error {
		s = &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: opts.Dir}
		if err := s.writeConfig(opts); err != nil {
			return proctest.Permanent(err)
		}
		return s.start(bin)
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Caddyfile returns the file the server runs: global options that keep
// Caddy to itself (no admin endpoint, no certificates, HTTP/1.1 only, its
// storage in Dir), then the site block, bound to loopback.
func (s *Server) Caddyfile(site string) string {
	return fmt.Sprintf(`{
	admin off
	auto_https off
	storage file_system %s
	servers {
		protocols h1
	}
}

http://%s {
	bind 127.0.0.1
%s
}
`, filepath.Join(s.Dir, "data"), s.Addr, site)
}

func (s *Server) writeConfig(opts Options) error {
	if err := os.MkdirAll(filepath.Join(s.Dir, "data"), 0o755); err != nil {
		return err
	}
	os.Remove(s.pidFile())
	return os.WriteFile(filepath.Join(s.Dir, "Caddyfile"), []byte(s.Caddyfile(opts.Site)), 0o644)
}

func (s *Server) pidFile() string { return filepath.Join(s.Dir, "caddy.pid") }
func (s *Server) logFile() string { return filepath.Join(s.Dir, "caddy.log") }

func (s *Server) start(bin string) error {
	log, err := os.Create(s.logFile())
	if err != nil {
		return err
	}
	defer log.Close() // the child has its own descriptor
	cmd := exec.Command(bin, "run", "--config", filepath.Join(s.Dir, "Caddyfile"), "--adapter", "caddyfile",
		"--pidfile", s.pidFile())
	// Caddy keeps its autosave and certificate data under HOME and XDG_*:
	// keep them in Dir.
	cmd.Env = append(os.Environ(), "HOME="+s.Dir, "XDG_DATA_HOME="+filepath.Join(s.Dir, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(s.Dir, "config"))
	cmd.Stdout, cmd.Stderr = log, log
	// Caddy writes its pid file only once its configuration runs,
	// listeners and all.
	p, err := proctest.Start(cmd, proctest.Wait{Name: "caddy", PIDFile: s.pidFile(),
		Addr: s.Addr, Timeout: 10 * time.Second, Log: s.LogTail})
	if err != nil {
		return err
	}
	s.proc = p
	return nil
}

// URL is the server's http:// base URL.
func (s *Server) URL() string { return "http://" + s.Addr }

// LogTail returns the last lines of Caddy's log.
func (s *Server) LogTail() string { return proctest.LogTail(s.logFile(), 8) }

// Stop shuts Caddy down (its whole process group) and waits for it.
func (s *Server) Stop() {
	if s.proc == nil {
		return
	}
	s.proc.Stop(syscall.SIGTERM, 5*time.Second)
	s.proc = nil
}
