package admission_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// errSpent is what the test's replay guard answers for a value spent
// before.
var errSpent = errors.New("test guard: spent")

// guard is a replay guard for Once.Spend that counts its calls.
type guard struct {
	mu    sync.Mutex
	spent map[string]bool
	calls int
}

func (g *guard) once(id []byte) *admission.Once {
	return &admission.Once{ID: id, Until: t0.Add(time.Hour), Spend: func(context.Context) error {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.calls++
		if g.spent[string(id)] {
			return errSpent
		}
		if g.spent == nil {
			g.spent = map[string]bool{}
		}
		g.spent[string(id)] = true
		return nil
	}}
}

// TestJoinOnceThroughGuard: on a store that does not spend one-time
// values (the embedded one), a join spends its value through Once.Spend
// before anything else, so a replayed value places nobody and spends no
// invite, and Spend's error is the join's.
func TestJoinOnceThroughGuard(t *testing.T) {
	r := newRig(t, event("show"))
	r.at(t, time.Second)
	g := &guard{}
	if _, _, err := r.e.Join(ctx, "show", admission.JoinRequest{Once: g.once([]byte("a"))}); err != nil {
		t.Fatalf("first join: %v", err)
	}
	_, _, err := r.e.Join(ctx, "show", admission.JoinRequest{Once: g.once([]byte("a"))})
	if !errors.Is(err, errSpent) {
		t.Fatalf("second join with the value = %v, want the guard's error", err)
	}
	if _, _, err := r.e.Join(ctx, "show", admission.JoinRequest{Once: g.once([]byte("b"))}); err != nil {
		t.Fatalf("join with another value: %v", err)
	}
	if g.calls != 3 {
		t.Fatalf("the guard was asked %d times for 3 joins", g.calls)
	}
	n, err := r.store.MemberCount(ctx, "show", admission.PublicLane, 0)
	if err != nil || n != 2 {
		t.Fatalf("members = %d, %v; want the 2 joins whose value was fresh", n, err)
	}
}

// TestJoinOnceInStore: on Redis the engine spends a join's value itself,
// never through Once.Spend: a new place in the public queue in the same
// script as its append (one round trip), any other join (an account's,
// one while the queue is not open) on its own before it does anything.
// Two replicas share the values: one value buys one place.
func TestJoinOnceInStore(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	clk := fakeclock.New(t0.Add(-10 * time.Second))
	opts := func(name string, seed byte) admission.Options {
		return admission.Options{Clock: clk.Now, Rand: rand.NewChaCha8([32]byte{seed}), Replica: name}
	}
	a, b := redisReplica(t, srv, opts("a", 1), event("show")), redisReplica(t, srv, opts("b", 2), event("show"))
	noSpend := func(id string) *admission.Once {
		return &admission.Once{ID: []byte(id), Until: t0.Add(time.Hour), Spend: func(context.Context) error {
			t.Errorf("the engine called Spend for %q on a store that spends values", id)
			return nil
		}}
	}
	join := func(e *admission.Engine, req admission.JoinRequest) (admission.Arrival, error) {
		return e.Arrive(ctx, "show", req)
	}

	// Before the queue opens: no place, but the value is spent.
	if res, err := join(a, admission.JoinRequest{Once: noSpend("early")}); err != nil || res.Outcome != admission.OutcomeScheduled {
		t.Fatalf("join before the queue opens = %v, %v", res.Outcome, err)
	}
	clk.Add(11 * time.Second) // open
	if _, err := join(b, admission.JoinRequest{Once: noSpend("early")}); !errors.Is(err, admission.ErrOnceUsed) {
		t.Fatalf("join with a value spent while scheduled = %v, want ErrOnceUsed", err)
	}

	// A new place: placed once, on either replica.
	if res, err := join(a, admission.JoinRequest{Once: noSpend("v1")}); err != nil || res.Outcome != admission.OutcomeJoined {
		t.Fatalf("first join = %v, %v", res.Outcome, err)
	}
	for _, e := range []*admission.Engine{a, b} {
		if _, err := join(e, admission.JoinRequest{Once: noSpend("v1")}); !errors.Is(err, admission.ErrOnceUsed) {
			t.Fatalf("replayed join = %v, want ErrOnceUsed", err)
		}
	}
	// An account's join spends first, in the same values.
	if _, err := join(b, admission.JoinRequest{Account: "acct-1", Once: noSpend("v1")}); !errors.Is(err, admission.ErrOnceUsed) {
		t.Fatalf("account join with a spent value = %v, want ErrOnceUsed", err)
	}
	if res, err := join(b, admission.JoinRequest{Account: "acct-1", Once: noSpend("v2")}); err != nil || res.Outcome != admission.OutcomeJoined {
		t.Fatalf("account join = %v, %v", res.Outcome, err)
	}
	if _, err := join(a, admission.JoinRequest{Once: noSpend("v2")}); !errors.Is(err, admission.ErrOnceUsed) {
		t.Fatalf("join with the value an account join spent = %v, want ErrOnceUsed", err)
	}

	// Many joins racing with one value, across both replicas: one place.
	var wg sync.WaitGroup
	var mu sync.Mutex
	placed := 0
	for i := range 20 {
		wg.Go(func() {
			_, err := join([]*admission.Engine{a, b}[i%2], admission.JoinRequest{Once: noSpend("race")})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				placed++
			case !errors.Is(err, admission.ErrOnceUsed):
				t.Errorf("racing join: %v", err)
			}
		})
	}
	wg.Wait()
	if placed != 1 {
		t.Fatalf("20 joins racing with one value: %d placed, want 1", placed)
	}
}
