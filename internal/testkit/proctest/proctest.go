package proctest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/freeport"
)

// Wait says when a started process counts as up.
type Wait struct {
	// Name is the server's name in errors ("nginx").
	Name string
	// PIDFile, when set, must name the process's pid: the server writes
	// it once it holds its listeners, so a stranger on Addr never counts.
	PIDFile string
	// Addr, when set, must accept a TCP connection.
	Addr string
	// Timeout bounds the wait; it must be more than 0.
	Timeout time.Duration
	// Log returns what the error of a failed start shows of the server's
	// log, e.g. a LogTail; nil shows nothing.
	Log func() string
}

// Proc is a started process and its process group.
type Proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// Start runs cmd in a process group of its own and waits until it is up
// as o describes. When it exits first or o.Timeout passes, the group is
// killed and the error tells which, with o.Log's text.
func Start(cmd *exec.Cmd, o Wait) (*Proc, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	deadline := time.Now().Add(o.Timeout)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s exited at start-up: %s", o.Name, o.log())
		default:
		}
		if p.up(o) {
			return p, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Kill()
	return nil, fmt.Errorf("%s did not listen within %s: %s", o.Name, o.Timeout, o.log())
}

func (o Wait) log() string {
	if o.Log == nil {
		return ""
	}
	return o.Log()
}

// up reports whether the process is ours and listening as o asks.
func (p *Proc) up(o Wait) bool {
	if o.PIDFile != "" && !ownsPIDFile(o.PIDFile, p.cmd.Process.Pid) {
		return false
	}
	if o.Addr != "" {
		c, err := net.DialTimeout("tcp", o.Addr, 200*time.Millisecond)
		if err != nil {
			return false
		}
		c.Close()
	}
	return true
}

// ownsPIDFile reports whether the pid file at path names pid.
func ownsPIDFile(path string, pid int) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && n == pid
}

// Pid is the process id, also the id of its process group.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited and been waited for.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Stop sends sig to the process group and waits for the process; after
// grace it kills the group.
func (p *Proc) Stop(sig syscall.Signal, grace time.Duration) {
	syscall.Kill(-p.Pid(), sig)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Kill()
	}
}

// Kill kills the process group and waits for the process.
func (p *Proc) Kill() {
	syscall.Kill(-p.Pid(), syscall.SIGKILL)
	<-p.done
}

// OnFreePorts calls try with a new free loopback port until it succeeds,
// at most attempts times (a port can be taken between being picked and
// the server binding it). It returns try's last error as "starting
// name: …", except that an error try marks Permanent (writing a
// configuration failed), or one from freeport, ends it at once as it is.
func OnFreePorts(name string, attempts int, try func(port int) error) error {
	var err error
	for range attempts {
		port, perr := freeport.Get()
		if perr != nil {
			return perr
		}
		if err = try(port); err == nil {
			return nil
		}
		if p, ok := err.(permanent); ok {
			return p.err
		}
	}
	return fmt.Errorf("starting %s: %w", name, err)
}

// Permanent marks an error that another port would not cure, for
// OnFreePorts to return at once.
func Permanent(err error) error { return permanent{err} }

type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// LogTail returns the last n lines of the file at path joined by " | ",
// or "(no log)" when it cannot be read.
func LogTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log)"
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, " | ")
}

// Binary returns the path of the program name on PATH, or else the first
// of paths that exists, or an error telling how to get it.
func Binary(name string, paths ...string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found: run `make deps` (installs Debian's %s)", name, name)
}

// InTest runs launch for tb with *dir set (to a test directory when it is
// ""), fails tb when the server does not start and stops it when tb ends.
func InTest[S interface{ Stop() }](tb testing.TB, dir *string, launch func() (S, error)) S {
	tb.Helper()
	if *dir == "" {
		*dir = tb.TempDir()
	}
	s, err := launch()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}
