package proctest

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
)

// server is a shell command that writes its pid to pidFile and then
// sleeps: a process whose pid file names it, listening on nothing.
func server(pidFile string) *exec.Cmd {
	return exec.Command("sh", "-c", `echo $$ > "$0"; exec sleep 60`, pidFile)
}

func TestStartWaitsForPIDFileAndListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pidFile := filepath.Join(t.TempDir(), "x.pid")
	p, err := Start(server(pidFile), Wait{Name: "x", PIDFile: pidFile, Addr: ln.Addr().String(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := readPID(t, pidFile); got != p.Pid() {
		t.Fatalf("pid file names %d, the process is %d", got, p.Pid())
	}
	p.Stop(syscall.SIGTERM, 5*time.Second)
	select {
	case <-p.Done():
	default:
		t.Fatal("Stop returned before the process was waited for")
	}
}

// TestStrangerOnThePortIsNotOurs: a listener that is not the process's
// own, with a pid file naming someone else, never counts as started.
func TestStrangerOnThePortIsNotOurs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "x.pid")
	if err := os.WriteFile(pidFile, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "x.log")
	if err := os.WriteFile(log, []byte("bind: address in use\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "60")
	_, err = Start(cmd, Wait{Name: "x", PIDFile: pidFile, Addr: ln.Addr().String(), Timeout: 300 * time.Millisecond,
		Log: func() string { return LogTail(log, 8) }})
	if err == nil {
		t.Fatal("a stranger's listener passed for ours")
	}
	if want := "x did not listen within 300ms: bind: address in use"; err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	// The process was killed and waited for.
	if cmd.ProcessState == nil {
		t.Fatal("the process was left running")
	}
}

func TestStartReportsEarlyExit(t *testing.T) {
	_, err := Start(exec.Command("sh", "-c", "exit 3"), Wait{Name: "x", Addr: "127.0.0.1:1", Timeout: 10 * time.Second,
		Log: func() string { return "the log" }})
	if err == nil || err.Error() != "x exited at start-up: the log" {
		t.Fatalf("error %v", err)
	}
}

// TestStopEndsTheGroup: Stop reaches the children too (nginx's workers).
func TestStopEndsTheGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile, child := filepath.Join(dir, "x.pid"), filepath.Join(dir, "child.pid")
	cmd := exec.Command("sh", "-c", `sleep 60 & echo $! > "$1"; echo $$ > "$0"; wait`, pidFile, child)
	p, err := Start(cmd, Wait{Name: "x", PIDFile: pidFile, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	pid := readPID(t, child)
	p.Stop(syscall.SIGTERM, 5*time.Second)
	// The child is not ours to wait for: it was reparented; poll until gone.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); strings.Contains(string(b), ") Z ") {
			return // a zombie awaiting its new parent is ended
		}
		if time.Now().After(deadline) {
			t.Fatal("the child outlived Stop")
		}
	}
}

func TestOnFreePorts(t *testing.T) {
	var ports []int
	errTaken := errors.New("taken")
	err := OnFreePorts("x", 3, func(port int) error {
		ports = append(ports, port)
		return errTaken
	})
	if !errors.Is(err, errTaken) || err.Error() != "starting x: taken" || len(ports) != 3 {
		t.Fatalf("err %v after %d tries", err, len(ports))
	}
	if ports[0] == ports[1] || ports[1] == ports[2] || ports[0] == ports[2] {
		t.Fatalf("a port came twice: %v", ports)
	}

	tries := 0
	errDisk := errors.New("disk full")
	err = OnFreePorts("x", 3, func(int) error { tries++; return Permanent(errDisk) })
	if err != errDisk || tries != 1 {
		t.Fatalf("err %v after %d tries", err, tries)
	}

	tries = 0
	if err := OnFreePorts("x", 3, func(int) error {
		if tries++; tries < 2 {
			return errTaken
		}
		return nil
	}); err != nil || tries != 2 {
		t.Fatalf("err %v after %d tries", err, tries)
	}
}

func TestLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if got := LogTail(path, 2); got != "(no log)" {
		t.Fatalf("missing log: %q", got)
	}
	long := strings.Repeat("x", 100<<10)
	if err := os.WriteFile(path, []byte("a\nb\n"+long+"\nd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := LogTail(path, 2); got != long+" | d" {
		t.Fatalf("tail of %d bytes, want the last 2 lines", len(got))
	}
	if got := LogTail(path, 8); !strings.HasPrefix(got, "a | b | ") {
		t.Fatalf("short log: %.20q", got)
	}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestBinary(t *testing.T) {
	if p, err := Binary("sh"); err != nil || filepath.Base(p) != "sh" {
		t.Fatalf("sh: %q %v", p, err)
	}
	fallback := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(fallback, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := Binary("no-such-program-wr", "/no/such/path", fallback); err != nil || p != fallback {
		t.Fatalf("fallback: %q %v", p, err)
	}
	_, err := Binary("no-such-program-wr", "/no/such/path")
	if want := "no-such-program-wr not found: run `make deps` (installs Debian's no-such-program-wr)"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

type stopper struct{ stopped *bool }

func (s stopper) Stop() { *s.stopped = true }

func TestInTest(t *testing.T) {
	var stopped bool
	var dirSeen string
	t.Run("launch", func(t *testing.T) {
		dir := ""
		InTest(t, &dir, func() (stopper, error) {
			dirSeen = dir
			return stopper{&stopped}, nil
		})
		if stopped {
			t.Fatal("stopped before the test ended")
		}
	})
	if dirSeen == "" || !stopped {
		t.Fatalf("dir %q, stopped %v", dirSeen, stopped)
	}
}
