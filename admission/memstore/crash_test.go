package memstore_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/memstore"
)

// The crash test runs the store in a child process (this test binary,
// re-executed), which prints a line for every acknowledged change, and
// kills it with SIGKILL mid-load.
const (
	envChild = "WAITROOM_ADMISSION_MEMSTORE_CRASH_CHILD"
	envDir   = "WAITROOM_ADMISSION_MEMSTORE_CRASH_DIR"
	envRound = "WAITROOM_ADMISSION_MEMSTORE_CRASH_ROUND"
)

func TestMain(m *testing.M) {
	if os.Getenv(envChild) == "1" {
		crashChild()
		return
	}
	os.Exit(m.Run())
}

// crashChild appends members to two tranches from many goroutines, and
// advances the serving counter, uses invites and seeds tranches on the
// side, until it is killed. Lines it prints:
//
//	m <tranche> <visitor hex>   a member is durable
//	a <serving>                 the public lane's counter is at least this
//	i <code>                    an invite is used
//	s <tranche> <seed hex>      a tranche's seed
func crashChild() {
	s, err := memstore.Open(memstore.Options{Dir: os.Getenv(envDir)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	round := os.Getenv(envRound)
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush() // acknowledged to the "client" only once written
	}
	say("ready")
	var n atomic.Uint64
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				v := admission.NewVisitorID()
				tr := i % 2
				if err := s.AppendMember(ctx, "ev", "public", tr, v); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(4)
				}
				say("m %d %s", tr, v)
				if i%10 == w%10 {
					to := n.Add(1)
					got, err := s.Advance(ctx, "ev", "public", to)
					if err != nil {
						os.Exit(5)
					}
					say("a %d", got)
					code := fmt.Sprintf("r%s-w%d-i%d", round, w, i)
					if first, err := s.UseInvite(ctx, "ev", code, time.Now().Add(time.Hour)); err != nil || !first {
						os.Exit(6)
					}
					say("i %s", code)
					tranche := 100 + int(to)
					seed, err := s.Seed(ctx, "ev", "public", tranche, []byte(v.String()))
					if err != nil {
						os.Exit(7)
					}
					say("s %d %x", tranche, seed)
				}
			}
		})
	}
	wg.Wait()
}

func TestCrashKill9(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	members := map[int]map[string]bool{0: {}, 1: {}}
	seeds := map[int]string{}
	var invites []string
	var served uint64
	for round := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"=1", envDir+"="+dir, envRound+"="+strconv.Itoa(round))
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
		killAt := 300 + 700*round // acknowledged appends
		appends := 0
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch f[0] {
			case "m":
				tr, _ := strconv.Atoi(f[1])
				members[tr][f[2]] = true
				if appends++; appends == killAt {
					cmd.Process.Signal(syscall.SIGKILL)
				}
			case "a":
				n, _ := strconv.ParseUint(f[1], 10, 64)
				served = max(served, n)
			case "i":
				invites = append(invites, f[1])
			case "s":
				tr, _ := strconv.Atoi(f[1])
				seeds[tr] = f[2]
			default:
				t.Fatalf("child said %q", sc.Text())
			}
		}
		cmd.Wait() // the lines read after the signal were acknowledged before it
		if appends < killAt {
			t.Fatalf("round %d: child stopped after %d appends", round, appends)
		}

		s, err := memstore.Open(memstore.Options{Dir: dir})
		if err != nil {
			t.Fatalf("round %d: reopening after kill -9: %v", round, err)
		}
		total := 0
		for tr, want := range members {
			got, err := s.Members(ctx, "ev", "public", tr)
			if err != nil {
				t.Fatal(err)
			}
			have := map[string]bool{}
			for _, v := range got {
				have[v.String()] = true
			}
			for v := range want {
				if !have[v] {
					t.Fatalf("round %d: acknowledged member %s of tranche %d is lost", round, v, tr)
				}
			}
			total += len(want)
		}
		m, err := s.Serving(ctx, "ev")
		if err != nil || m["public"] < served {
			t.Fatalf("round %d: serving %d after reopen, %d was acknowledged (%v)", round, m["public"], served, err)
		}
		for _, code := range invites {
			if first, err := s.UseInvite(ctx, "ev", code, time.Now().Add(time.Hour)); err != nil || first {
				t.Fatalf("round %d: acknowledged use of invite %s is lost (%v)", round, code, err)
			}
		}
		for tr, want := range seeds {
			got, err := s.Seed(ctx, "ev", "public", tr, []byte("another"))
			if err != nil || fmt.Sprintf("%x", got) != want {
				t.Fatalf("round %d: seed of tranche %d is %x after reopen, %s was acknowledged", round, tr, got, want)
			}
		}
		t.Logf("round %d: killed after %d acknowledged appends; all %d acknowledged members, %d invite uses, %d seeds and serving ≥ %d survive",
			round, appends, total, len(invites), len(seeds), served)
		s.Close()
	}
}
