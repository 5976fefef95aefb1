package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/freeport"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/inventory/client"
	"github.com/waitroom/waitroom/inventory/inventorytest"
)

// binDir holds the binary built for this test run; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildWaitroom builds the binary once per test run.
var buildWaitroom = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "waitroom-bin-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "waitroom")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// sidecar is a `waitroom inventory` process.
type sidecar struct {
	t    *testing.T
	args []string
	url  string
	cmd  *exec.Cmd
}

const testToken = "sidecar-test-token-0123456789"

func startSidecar(t *testing.T, store ...string) *sidecar {
	t.Helper()
	port, err := freeport.Get()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	s := &sidecar{t: t, url: "http://" + addr, args: append([]string{"inventory", "--listen", addr}, store...)}
	s.start()
	t.Cleanup(func() {
		if s.cmd != nil {
			s.cmd.Process.Signal(syscall.SIGTERM)
			s.cmd.Wait()
		}
	})
	return s
}

func (s *sidecar) start() {
	s.t.Helper()
	bin, err := buildWaitroom()
	if err != nil {
		s.t.Fatal(err)
	}
	s.cmd = exec.Command(bin, s.args...)
	s.cmd.Env = append(os.Environ(), "WAITROOM_INVENTORY_TOKEN="+testToken)
	// The port was free a moment ago, but another test's server may have
	// taken it since; only after our process says it listens does an
	// answer on it come from us.
	listening := &logWatch{want: []byte("inventory sidecar listening"), seen: make(chan struct{})}
	s.cmd.Stderr = listening
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	select {
	case <-listening.seen:
	case <-time.After(time.Until(deadline)):
		s.t.Fatalf("sidecar %v did not listen", s.args)
	}
	for {
		resp, err := http.Get(s.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("sidecar %v did not become ready", s.args)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// logWatch passes a process's log to the test's stderr and closes seen
// once a line holding want was written.
type logWatch struct {
	want []byte
	seen chan struct{}
	mu   sync.Mutex
	line []byte // the unfinished line so far
}

func (w *logWatch) Write(p []byte) (int, error) {
	os.Stderr.Write(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range p {
		if b != '\n' {
			w.line = append(w.line, b)
			continue
		}
		if bytes.Contains(w.line, w.want) {
			select {
			case <-w.seen:
			default:
				close(w.seen)
			}
		}
		w.line = w.line[:0]
	}
	return len(p), nil
}

func (s *sidecar) kill9() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
	s.cmd = nil
}

// TestSidecarKill9 runs the real binary, loads it through the Go client,
// kills it with SIGKILL mid-load and restarts it: every acknowledged
// confirm and cancel must be there, as acknowledged, and the audit stream
// must replay without a seat ever held or sold twice.
func TestSidecarKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	stores := map[string]func(t *testing.T) []string{
		"embedded": func(t *testing.T) []string { return []string{"--data-dir", t.TempDir()} },
		"redis": func(t *testing.T) []string {
			return []string{"--redis", redistest.Start(t, redistest.Options{AppendOnly: true}).URL()}
		},
	}
	for name, args := range stores {
		t.Run(name, func(t *testing.T) {
			sc := startSidecar(t, args(t)...)
			c := client.New(sc.url, testToken)
			ctx := context.Background()
			ev := inventorytest.NewEventID()
			if _, err := c.PutEvent(ctx, ev, inventorytest.CrashEvent(), "test"); err != nil {
				t.Fatal(err)
			}
			var (
				mu   sync.Mutex
				acks []inventorytest.Ack
			)
			for round := range 2 {
				n := 0
				inventorytest.Load(ctx, c, ev, 8, uint64(round), func(a inventorytest.Ack) {
					mu.Lock()
					defer mu.Unlock()
					acks = append(acks, a)
					if n++; n == 60 {
						sc.kill9()
					}
				})
				sc.start()
				time.Sleep(50 * time.Millisecond) // let the load's short holds run out
				inventorytest.VerifyAcked(t, c, ev, acks)
				entries := inventorytest.CheckAuditInvariants(t, c, ev)
				t.Logf("round %d: sidecar killed after %d acks; %d acknowledged changes survive, %d audit entries replay cleanly", round, n, len(acks), entries)
			}
		})
	}
}
