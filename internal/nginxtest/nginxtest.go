package nginxtest

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
	// Dir holds the configuration, logs and temporary files; a test
	// directory when "" (Start) and required for Launch.
	Dir string
	// HTTP is the inside of the http { } block, with {{PORT}} standing
	// for the listening port nginx is given.
	HTTP string
	// Workers is worker_processes (default 1).
	Workers int
}

// Server is a running nginx.
type Server struct {
	// Addr is the 127.0.0.1:port the configuration's {{PORT}} became.
	Addr string
	Dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// Binary returns the path of nginx, or an error telling how to get it.
func Binary() (string, error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx", nil
	}
	return "", errors.New("nginx not found: run `make deps` (installs Debian's nginx)")
}

// Start runs nginx with opts and stops it when the test ends.
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

// Launch runs nginx with opts on a free port; the caller stops it.
func Launch(opts Options) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		return nil, errors.New("nginxtest: Launch needs a directory")
	}
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	return launch(bin, opts, 5)
}

// launch tries up to attempts free ports (a port can be taken between
// being picked and nginx binding it).
func launch(bin string, opts Options, attempts int) (*Server, error) {
	var lastErr error
	for range attempts {
		port, err := freeport.Get()
		if err != nil {
			return nil, err
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: opts.Dir}
		if err := s.writeConfig(opts, port); err != nil {
			return nil, err
		}
		if lastErr = s.start(bin); lastErr == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("starting nginx: %w", lastErr)
}

func (s *Server) writeConfig(opts Options, port int) error {
	for _, d := range []string{"tmp", "logs"} {
		if err := os.MkdirAll(filepath.Join(s.Dir, d), 0o755); err != nil {
			return err
		}
	}
	// Workers run as an unprivileged user when nginx starts as root; they
	// must be able to use the temporary directories.
	if err := os.Chmod(s.Dir, 0o755); err != nil {
		return err
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;\n"
	}
	tmp := filepath.Join(s.Dir, "tmp")
	conf := fmt.Sprintf(`%sworker_processes %d;
daemon off;
master_process on;
pid %s;
error_log %s warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path %s/body;
  proxy_temp_path %s/proxy;
  fastcgi_temp_path %s/fastcgi;
  uwsgi_temp_path %s/uwsgi;
  scgi_temp_path %s/scgi;
%s
}
`, user, opts.Workers, filepath.Join(s.Dir, "nginx.pid"), filepath.Join(s.Dir, "logs", "error.log"),
		tmp, tmp, tmp, tmp, tmp, strings.ReplaceAll(opts.HTTP, "{{PORT}}", strconv.Itoa(port)))
	return os.WriteFile(filepath.Join(s.Dir, "nginx.conf"), []byte(conf), 0o644)
}

func (s *Server) start(bin string) error {
	cmd := exec.Command(bin, "-p", s.Dir, "-c", filepath.Join(s.Dir, "nginx.conf"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("nginx exited at start-up: %s", s.LogTail())
		default:
		}
		// The port was free a moment ago, but another test's server may
		// have taken it since: a connection alone could reach a stranger
		// while ours gives up on "address in use". nginx writes its pid
		// file only after it holds its listening sockets.
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
	return fmt.Errorf("nginx did not listen within 10s: %s", s.LogTail())
}

// ownsPIDFile reports whether nginx's pid file names the master pid.
func (s *Server) ownsPIDFile(pid int) bool {
	b, err := os.ReadFile(filepath.Join(s.Dir, "nginx.pid"))
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && n == pid
}

// URL is the server's http:// base URL.
func (s *Server) URL() string { return "http://" + s.Addr }

// LogTail returns the last lines of nginx's error log.
func (s *Server) LogTail() string {
	f, err := os.Open(filepath.Join(s.Dir, "logs", "error.log"))
	if err != nil {
		return "(no log)"
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 8 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, " | ")
}

// Stop shuts nginx down (its whole process group) and waits for it.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGQUIT)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	s.cmd = nil
}
