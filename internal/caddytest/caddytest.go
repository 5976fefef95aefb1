package caddytest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/freeport"
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
	cmd  *exec.Cmd
	done chan struct{}
}

// Binary returns the path of caddy, or an error telling how to get it.
func Binary() (string, error) {
	if p, err := exec.LookPath("caddy"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/caddy"); err == nil {
		return "/usr/bin/caddy", nil
	}
	return "", errors.New("caddy not found: run `make deps` (installs Debian's caddy)")
}

// Start runs Caddy with opts and stops it when the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	if opts.Dir == "" {
		opts.Dir = tb.TempDir()
	}
	s, err := Launch(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
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
	var lastErr error
	for range attempts {
		port, err := freeport.Get()
		if err != nil {
			return nil, err
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: opts.Dir}
		if err := s.writeConfig(opts); err != nil {
			return nil, err
		}
		if lastErr = s.start(bin); lastErr == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("starting caddy: %w", lastErr)
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
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("caddy exited at start-up: %s", s.LogTail())
		default:
		}
		// The port was free a moment ago, but another test's server may
		// have taken it since: a connection alone could reach a stranger
		// while ours gives up on "address in use". Caddy writes its pid
		// file only once its configuration runs, listeners and all.
		if !s.ownsPIDFile(cmd.Process.Pid) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if c, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond); err == nil {
			c.Close()
			s.cmd, s.done = cmd, done
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
	return fmt.Errorf("caddy did not listen within 10s: %s", s.LogTail())
}

// ownsPIDFile reports whether Caddy's pid file names pid.
func (s *Server) ownsPIDFile(pid int) bool {
	b, err := os.ReadFile(s.pidFile())
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && n == pid
}

// URL is the server's http:// base URL.
func (s *Server) URL() string { return "http://" + s.Addr }

// LogTail returns the last lines of Caddy's log.
func (s *Server) LogTail() string {
	f, err := os.Open(s.logFile())
	if err != nil {
		return "(no log)"
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 8 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, " | ")
}

// Stop shuts Caddy down (its whole process group) and waits for it.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	s.cmd = nil
}
