// Cases on one-time values (admission.OnceStore), for the stores that
// spend them: a value buys one place, the append and the spend are one
// step, a call repeated after a lost reply is not its own replay, a value
// is spent for every event, values expire, and of concurrent spends
// exactly one wins.

package admissiontest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// onceStore returns s as a OnceStore, or skips the test.
func onceStore(t *testing.T, s admission.Store) admission.OnceStore {
	t.Helper()
	o, ok := s.(admission.OnceStore)
	if !ok || !o.SpendsOnce() {
		t.Skip("the store does not spend one-time values (the replay guard does)")
	}
	return o
}

func onceID() []byte {
	v := admission.NewVisitorID()
	return v[:]
}

func appendOnce(t *testing.T, o admission.OnceStore, ev string, tranche int, v admission.VisitorID, id []byte, until time.Time) bool {
	t.Helper()
	ok, err := o.AppendMemberOnce(ctx, ev, public, tranche, v, id, until)
	check(t, err)
	return ok
}

// testOnce: the first join with a value is placed; another join with it
// is refused and appends nothing; the first join's call repeated (a
// retry after a lost reply) succeeds again; SpendOnce spends a value for
// the joins after it; a value spent for one event is spent for all.
func testOnce(t *testing.T, s admission.Store) {
	o := onceStore(t, s)
	ev, other := NewEventID(), NewEventID()
	v := ids(3)
	id, until := onceID(), time.Now().Add(time.Minute)
	if !appendOnce(t, o, ev, 1, v[0], id, until) {
		t.Fatal("the first join with a value was refused")
	}
	if appendOnce(t, o, ev, 1, v[1], id, until) {
		t.Fatal("a second join with a spent value was placed")
	}
	wantMembers(t, s, ev, public, 1, v[:1])
	if !appendOnce(t, o, ev, 1, v[0], id, until) {
		t.Fatal("the first join's call, repeated, was refused as a replay")
	}
	wantMembers(t, s, ev, public, 1, []admission.VisitorID{v[0], v[0]}) // the draw drops the duplicate
	if appendOnce(t, o, other, 1, v[1], id, until) {
		t.Fatal("a value spent for one event bought a place in another")
	}
	wantMembers(t, s, other, public, 1, nil)

	spent := onceID()
	ok, err := o.SpendOnce(ctx, ev, spent, until)
	check(t, err)
	if !ok {
		t.Fatal("SpendOnce of a fresh value reported it spent")
	}
	if ok, err := o.SpendOnce(ctx, ev, spent, until); err != nil || ok {
		t.Fatalf("SpendOnce twice = %v, %v; want false", ok, err)
	}
	if appendOnce(t, o, ev, 2, v[2], spent, until) {
		t.Fatal("a join with a value SpendOnce spent was placed")
	}
	if ok, err := o.SpendOnce(ctx, ev, id, until); err != nil || ok {
		t.Fatalf("SpendOnce of a value a join spent = %v, %v; want false", ok, err)
	}
	wantMembers(t, s, ev, public, 2, nil)
}

// testOnceExpire: a value is remembered until its time, then forgotten
// (the challenge it names has expired, so nobody can bring it again).
func testOnceExpire(t *testing.T, s admission.Store) {
	o := onceStore(t, s)
	ev := NewEventID()
	id := onceID()
	if !appendOnce(t, o, ev, 1, admission.NewVisitorID(), id, time.Now().Add(300*time.Millisecond)) {
		t.Fatal("the first join was refused")
	}
	if appendOnce(t, o, ev, 1, admission.NewVisitorID(), id, time.Now().Add(time.Minute)) {
		t.Fatal("the value was forgotten before its time")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		time.Sleep(100 * time.Millisecond)
		ok, err := o.SpendOnce(ctx, ev, id, time.Now().Add(time.Minute))
		check(t, err)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the value was still remembered 5 s after its time")
		}
	}
}

// testOnceConcurrent: of many joins racing with one value (and SpendOnce
// calls among them), exactly one wins, and only a winning join is a
// member.
func testOnceConcurrent(t *testing.T, s admission.Store) {
	o := onceStore(t, s)
	const racers = 32
	for round := range 5 {
		ev := NewEventID()
		id, until := onceID(), time.Now().Add(time.Minute)
		v := ids(racers)
		var wins atomic.Int32
		won := make([]bool, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				var ok bool
				var err error
				if i%4 == 3 {
					ok, err = o.SpendOnce(ctx, ev, id, until)
				} else {
					ok, err = o.AppendMemberOnce(ctx, ev, public, 1, v[i], id, until)
				}
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					wins.Add(1)
					won[i] = true
				}
			})
		}
		wg.Wait()
		if n := wins.Load(); n != 1 {
			t.Fatalf("round %d: %d of %d racers spent one value", round, n, racers)
		}
		var want []admission.VisitorID
		for i, w := range won {
			if w && i%4 != 3 {
				want = append(want, v[i])
			}
		}
		wantMembers(t, s, ev, public, 1, want)
	}
}
