package nginxtest

import (
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

	"github.com/waitroom/waitroom/internal/testkit/proctest"
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
	proc *proctest.Proc
}

// Binary returns the path of nginx, or an error telling how to get it.
func Binary() (string, error) { return proctest.Binary("nginx", "/usr/sbin/nginx") }

// Start runs nginx with opts and stops it when the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	return proctest.InTest(tb, &opts.Dir, func() (*Server, error) { return Launch(opts) })
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
	var s *Server
	err := proctest.OnFreePorts("nginx", attempts, func(port int) error {
		s = &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: opts.Dir}
		if err := s.writeConfig(opts, port); err != nil {
			return proctest.Permanent(err)
		}
		return s.start(bin)
	})
	if err != nil {
		return nil, err
	}
	return s, nil
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
	cmd.Stdout, cmd.Stderr = nil, nil
	// nginx writes its pid file only after it holds its listening sockets.
	p, err := proctest.Start(cmd, proctest.Wait{Name: "nginx", PIDFile: filepath.Join(s.Dir, "nginx.pid"),
		Addr: s.Addr, Timeout: 10 * time.Second, Log: s.LogTail})
	if err != nil {
		return err
	}
	s.proc = p
	return nil
}

// URL is the server's http:// base URL.
func (s *Server) URL() string { return "http://" + s.Addr }

// LogTail returns the last lines of nginx's error log.
func (s *Server) LogTail() string {
	return proctest.LogTail(filepath.Join(s.Dir, "logs", "error.log"), 8)
}

// Stop shuts nginx down (its whole process group) and waits for it.
func (s *Server) Stop() {
	if s.proc == nil {
		return
	}
	s.proc.Stop(syscall.SIGQUIT, 5*time.Second)
	s.proc = nil
}
