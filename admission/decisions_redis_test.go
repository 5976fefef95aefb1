package admission_test

import (
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestDecisionsFollower runs two replicas over one Redis: only the lease
// holder decides and records; a follower has no decisions, and says so;
// a replica that lost the lease keeps what it decided while it led.
func TestDecisionsFollower(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	clk := fakeclock.New(t0.Add(60 * time.Second))
	m := &meter{}
	cfg := event("shared")
	cfg.Controller.Tick = 100 * time.Millisecond // the lease: 5 ticks of Redis's own (real) time
	replica := func(name string) *admission.Engine {
		return redisReplica(t, srv, admission.Options{Clock: clk.Now, Meter: m, Replica: name}, cfg)
	}
	a, b := replica("a"), replica("b")
	tick := func(es ...*admission.Engine) {
		t.Helper()
		clk.Add(time.Second)
		for _, e := range es {
			if err := e.Tick(ctx); err != nil {
				t.Fatalf("Tick: %v", err)
			}
		}
	}
	for range 5 {
		tick(a, b)
	}
	lead, _ := a.Decisions("shared", time.Time{}, 100)
	follow, _ := b.Decisions("shared", time.Time{}, 100)
	if !lead.Leader || !lead.Deciding || len(lead.Decisions) != 5 || sumCounts(lead.Counts) != 5 {
		t.Fatalf("leader: %+v", lead)
	}
	if follow.Leader || follow.Deciding || len(follow.Decisions) != 0 || sumCounts(follow.Counts) != 0 ||
		len(follow.Counts) != len(admission.Reasons) || !b.Figures("shared").Decision.At.IsZero() {
		t.Fatalf("follower: %+v", follow)
	}

	if lead.Tick != cfg.Controller.Tick {
		t.Fatalf("tick %v", lead.Tick)
	}

	// a stops; b takes the lease once it runs out and decides from then.
	for deadline := time.Now().Add(time.Minute); !b.Figures("shared").Leader; {
		if time.Now().After(deadline) {
			t.Fatal("b never took the lease")
		}
		time.Sleep(50 * time.Millisecond)
		tick(b)
	}
	tick(a, b)
	was, _ := a.Decisions("shared", time.Time{}, 100)
	now, _ := b.Decisions("shared", time.Time{}, 100)
	if was.Leader || was.Deciding || len(was.Decisions) != 5 || !was.Last.At.Equal(lead.Last.At) {
		t.Fatalf("the former leader: leader %v deciding %v, %d decisions", was.Leader, was.Deciding, len(was.Decisions))
	}
	if !now.Leader || !now.Deciding || len(now.Decisions) == 0 || !now.Last.At.Equal(clk.Now()) {
		t.Fatalf("the new leader: %+v", now)
	}
}
