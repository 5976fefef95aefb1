package chaos

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/freeport"
	"github.com/waitroom/waitroom/internal/testkit/proctest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// binaries builds waitroom and waitroom-load once per test run.
var binaries = sync.OnceValues(func() (map[string]string, error) {
	dir, err := os.MkdirTemp("", "waitroom-chaos-bin-")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, name := range []string{"waitroom", "waitroom-load"} {
		bin := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", bin, "github.com/waitroom/waitroom/cmd/"+name)
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %v\n%s", name, err, b)
		}
		out[name] = bin
	}
	return out, nil
})

func binary(t *testing.T, name string) string {
	t.Helper()
	bins, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	return bins[name]
}

// seeds lists a cluster's masters' addresses for a configuration.
func seeds(c *redistest.Cluster, masters int) string {
	return strings.Join(c.Addrs()[:masters], ", ")
}

// server is a process of ours on a fixed address: a waitroom replica,
// the sidecar or the origin, started again on the same address after a
// kill.
type server struct {
	name, addr string
	args       []string
	env        []string
	log        *os.File
	proc       *proctest.Proc
}

// startServer writes nothing; it runs bin args with env, its output
// appended to a log file in dir, and waits until addr accepts.
func startServer(t *testing.T, dir, name, addr string, env []string, bin string, args ...string) *server {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	s := &server{name: name, addr: addr, args: append([]string{bin}, args...), env: env, log: f}
	s.start(t)
	t.Cleanup(func() {
		if s.proc != nil {
			s.proc.Stop(syscall.SIGTERM, 10*time.Second)
		}
		f.Close()
	})
	return s
}

func (s *server) start(t *testing.T) {
	t.Helper()
	var err error
	for range 50 { // a killed process's port may linger a moment
		cmd := exec.Command(s.args[0], s.args[1:]...)
		cmd.Env = append(os.Environ(), s.env...)
		cmd.Stdout, cmd.Stderr = s.log, s.log
		s.proc, err = proctest.Start(cmd, proctest.Wait{Name: s.name, Addr: s.addr, Timeout: 20 * time.Second,
			Log: func() string { return proctest.LogTail(s.log.Name(), 5) }})
		if err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal(err)
}

// kill is kill -9 of the process group.
func (s *server) kill() {
	s.proc.Kill()
	s.proc = nil
}

// freeAddr is a loopback address free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	port, err := freeport.Get()
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// writeTemplate renders the template file name with data into dir.
func writeTemplate(t *testing.T, dir, name, out string, data any) string {
	t.Helper()
	tmpl, err := template.ParseFiles(name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, out)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := tmpl.Execute(f, data); err != nil {
		t.Fatal(err)
	}
	return path
}
