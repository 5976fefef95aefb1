package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/waitroom/waitroom/bench/internal/cleanup"
	"github.com/waitroom/waitroom/internal/testkit/freeport"
)

// proc is a process the benchmark started, in its own process group.
type proc struct {
	name, addr, logPath string
	cmd                 *exec.Cmd
}

// stop ends the process group: SIGTERM, then SIGKILL after 10 s. It may
// run more than once.
func (p *proc) stop() {
	if p == nil || p.cmd == nil {
		return
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	p.cmd = nil
}

// start runs name args in its own process group, niced like the
// benchmark, with its output in a log file in tmp, and waits up to 15 s
// until health answers 200.
func start(tmp, name, addr, health string, env []string, exe string, args ...string) *proc {
	p := &proc{name: name, addr: addr, logPath: filepath.Join(tmp, name+".log")}
	f, err := os.Create(p.logPath)
	if err != nil {
		fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fatalf("starting %s: %v", name, err)
	}
	p.cmd = cmd
	atExit(p.stop)
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, _, err := httpGet(health)
		if err == nil && code == 200 {
			return p
		}
		if time.Now().After(deadline) {
			p.fatalf("%s did not answer 200 within 15s (last: %d %v)", health, code, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fatalf exits with the tail of the process's log.
func (p *proc) fatalf(format string, args ...any) {
	b, _ := os.ReadFile(p.logPath)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	fatalf("%s: %s\n--- %s ---\n%s", p.name, fmt.Sprintf(format, args...), p.logPath, b)
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

func httpGet(url string) (int, []byte, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// freeAddr returns a 127.0.0.1 address that was free a moment ago.
func freeAddr() string {
	port, err := freeport.Get()
	if err != nil {
		fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// Processes started in their own groups outlive the benchmark unless
// stopped: fatal errors and signals run the registered stops first
// (bench/internal/cleanup).
var (
	atExit       = cleanup.AtExit
	fatalf       = cleanup.Fatalf
	fatal        = cleanup.Fatal
	stopOnSignal = cleanup.StopOnSignal
)

// metricValue is the value of the first sample of name with the label
// selector sel ("" for none) in Prometheus text, or -1.
func metricValue(text []byte, name, sel string) float64 {
	prefix := []byte(name + sel + " ")
	for _, line := range bytes.Split(text, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, prefix); ok {
			if f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64); err == nil {
				return f
			}
		}
	}
	return -1
}
