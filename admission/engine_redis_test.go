package admission_test

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestReplicasShareOneQueue runs two replicas over one Redis: only the
// lease holder draws and admits, the other follows its counters and
// draws and answers visitors the same way; when the holder dies the
// other takes the lease (within Options.Lease, 5 s here) and carries on.
func TestReplicasShareOneQueue(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	clk := fakeclock.New(t0.Add(-10 * time.Second))
	m := &meter{}
	m.m = admission.Measurements{LatencyP50: 20 * time.Millisecond, LatencyP95: 50 * time.Millisecond, RequestRate: 10}
	replica := func(name string, seed byte) *admission.Engine {
		return redisReplica(t, srv, admission.Options{Clock: clk.Now, Meter: m,
			Rand: rand.NewChaCha8([32]byte{seed}), Replica: name}, event("shared"))
	}
	a, b := replica("a", 1), replica("b", 2)
	tick := func(d time.Duration, es ...*admission.Engine) {
		t.Helper()
		if now := clk.Now(); t0.Add(d).After(now) {
			clk.Add(t0.Add(d).Sub(now))
		}
		for _, e := range es {
			if err := e.Tick(ctx); err != nil {
				t.Fatalf("Tick: %v", err)
			}
		}
	}
	tick(time.Second, a, b)
	if !a.Figures("shared").Leader || b.Figures("shared").Leader {
		t.Fatalf("leaders: a %v, b %v; want a only", a.Figures("shared").Leader, b.Figures("shared").Leader)
	}
	// Visitors join through either replica.
	var tickets []admission.Ticket
	for i := range 40 {
		e := a
		if i%2 == 1 {
			e = b
		}
		tk, _, err := e.Join(ctx, "shared", admission.JoinRequest{})
		if err != nil {
			t.Fatal(err)
		}
		tickets = append(tickets, tk)
	}
	tick(62*time.Second, a, b)
	tick(63*time.Second, a, b)
	// The follower finds every number the leader drew.
	seen := map[uint64]bool{}
	for i := range tickets {
		res, err := b.Status(ctx, "shared", tickets[i])
		if err != nil {
			t.Fatal(err)
		}
		tickets[i] = res.Ticket
		if tickets[i].Number == 0 || seen[tickets[i].Number] {
			t.Fatalf("follower status after the draw: %+v", tickets[i])
		}
		seen[tickets[i].Number] = true
	}
	fa, fb := a.Figures("shared").Lanes["public"], b.Figures("shared").Lanes["public"]
	if fa.Serving == 0 || fb.Serving != fa.Serving || fb.Drawn != 40 {
		t.Fatalf("follower lags: leader %+v, follower %+v", fa, fb)
	}
	// The leader dies (stops ticking). Until its lease runs out the
	// follower does not take over; then it does, and admits on.
	tick(64*time.Second, b)
	if b.Figures("shared").Leader {
		t.Fatal("the follower took the lease while the leader's was valid")
	}
	time.Sleep(5500 * time.Millisecond) // the lease (DefaultLease) runs in real Redis time
	late, _, err := b.Join(ctx, "shared", admission.JoinRequest{})
	if err != nil {
		t.Fatal(err)
	}
	before := b.Figures("shared").Lanes["public"].Serving
	for s := 65; s < 90; s++ {
		tick(time.Duration(s)*time.Second, b)
	}
	fb = b.Figures("shared").Lanes["public"]
	if !b.Figures("shared").Leader || fb.Serving <= before {
		t.Fatalf("after the leader died: leader %v, serving %d (was %d)", b.Figures("shared").Leader, fb.Serving, before)
	}
	res, err := b.Status(ctx, "shared", late)
	if err != nil || res.Ticket.Number == 0 {
		t.Fatalf("a visitor who joined after the failover was not drawn: %+v, %v", res, err)
	}
}

// TestInviteRedeemsOnceAcrossReplicas: visitors racing with one code on
// two replicas over one Redis: exactly one gets a place, every other one
// ErrInviteUsed.
func TestInviteRedeemsOnceAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	clk := fakeclock.New(t0.Add(time.Second))
	secret := randomBytes(32)
	cfg := event("shared")
	cfg.Lanes = []admission.LaneConfig{{Name: "presale", Priority: true, Access: admission.LaneAccess{InviteSecret: secret}}}
	replica := func(name string) *admission.Engine {
		return redisReplica(t, srv, admission.Options{Clock: clk.Now, Meter: &meter{}, Replica: name}, cfg)
	}
	engines := []*admission.Engine{replica("a"), replica("b")}
	var id [admission.ShortInviteIDLen]byte
	copy(id[:], randomBytes(len(id)))
	code := admission.MakeShortInvite(secret, "shared", id)
	var mu sync.Mutex
	placed, used := 0, 0
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			_, err := engines[i%2].Arrive(ctx, "shared", admission.JoinRequest{Credential: admission.Credential{Invite: code}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				placed++
			case errors.Is(err, admission.ErrInviteUsed):
				used++
			default:
				t.Errorf("join: %v", err)
			}
		})
	}
	wg.Wait()
	if placed != 1 || used != 15 {
		t.Fatalf("16 joins with one code: %d placed, %d told it was used; want 1 and 15", placed, used)
	}
}

// redisReplica is an engine with opts over a store of its own on srv, as
// another process sharing the Redis would be.
func redisReplica(t *testing.T, srv *redistest.Server, opts admission.Options, cfgs ...admission.EventConfig) *admission.Engine {
	t.Helper()
	s, err := redisstore.New(ctx, redisstore.Options{Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	opts.Store = s
	e, err := admission.New(opts, cfgs...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
