package memstore_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/inventory/inventorytest"
	"github.com/waitroom/waitroom/inventory/memstore"
)

// The crash test runs the store in a child process (this test binary,
// re-executed), which prints a line for every acknowledged confirm and
// cancel, and kills it with SIGKILL mid-load.
const (
	envChild = "WAITROOM_MEMSTORE_CRASH_CHILD"
	envDir   = "WAITROOM_MEMSTORE_CRASH_DIR"
	envEvent = "WAITROOM_MEMSTORE_CRASH_EVENT"
	envSeed  = "WAITROOM_MEMSTORE_CRASH_SEED"
)

func TestMain(m *testing.M) {
	if os.Getenv(envChild) == "1" {
		crashChild()
		return
	}
	os.Exit(m.Run())
}

// crashChild loads the store until it is killed.
func crashChild() {
	s, err := memstore.Open(memstore.Options{Dir: os.Getenv(envDir), SnapshotEvery: 300})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	var seed uint64
	fmt.Sscan(os.Getenv(envSeed), &seed)
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	fmt.Fprintln(out, "ready")
	out.Flush()
	inventorytest.Load(context.Background(), s, os.Getenv(envEvent), 8, seed, func(a inventorytest.Ack) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(out, a.String())
		out.Flush() // acknowledged to the "client" only once written
	})
}

func TestCrashKill9(t *testing.T) {
	dir := t.TempDir()
	ev := inventorytest.NewEventID()
	s, err := memstore.Open(memstore.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutEvent(context.Background(), ev, inventorytest.CrashEvent(), "test"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	var acks []inventorytest.Ack
	for round := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"=1", envDir+"="+dir, envEvent+"="+ev, fmt.Sprintf("%s=%d", envSeed, round))
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		if !sc.Scan() || sc.Text() != "ready" {
			cmd.Process.Kill()
			t.Fatalf("child did not start: %q", sc.Text())
		}
		// Kill after a varying number of acknowledged changes.
		killAt := 40 + 60*round
		n := 0
		for sc.Scan() {
			a, ok := inventorytest.ParseAck(sc.Text())
			if !ok {
				t.Fatalf("child said %q", sc.Text())
			}
			acks = append(acks, a)
			if n++; n == killAt {
				cmd.Process.Signal(syscall.SIGKILL)
			}
		}
		cmd.Wait() // the lines read after the signal were acknowledged before it
		if n < killAt {
			t.Fatalf("round %d: child stopped after %d acks", round, n)
		}

		s, err := memstore.Open(memstore.Options{Dir: dir})
		if err != nil {
			t.Fatalf("round %d: reopening after kill -9: %v", round, err)
		}
		time.Sleep(50 * time.Millisecond) // let the short holds of the load run out
		inventorytest.VerifyAcked(t, s, ev, acks)
		entries := inventorytest.CheckAuditInvariants(t, s, ev)
		t.Logf("round %d: killed after %d acks; %d acknowledged changes survive, %d audit entries replay cleanly", round, n, len(acks), entries)
		s.Close()
	}
}
