package admission_test

// Pass uses and the no-show rate: a visitor counts as having come when a
// request with their pass went through the gate (Engine.NoteUse, on any
// replica), not when their status poll minted the pass.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/memstore"
	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
	"github.com/waitroom/waitroom/internal/testkit/racedetect"
)

// follower is a replica's view of a store shared with a leader: an
// embedded store grants every holder the lease (it has one process), so
// a second engine over it is made to follow.
type follower struct{ admission.Store }

func (follower) Lease(context.Context, string, string, time.Duration) (bool, error) {
	return false, nil
}

// replicas are engines over one store's backend: the first leads, the
// others follow (over a second Redis client, or over the same embedded
// store made to follow). set, when given, adjusts replica i's options.
func replicas(t *testing.T, k storeKind, n int, cfg admission.EventConfig, set ...func(i int, o *admission.Options)) *modeRig {
	t.Helper()
	r := &modeRig{clk: fakeclock.New(t0), meter: &meter{}}
	r.meter.m = admission.Measurements{LatencyP50: 20 * time.Millisecond, LatencyP95: 50 * time.Millisecond, RequestRate: 10}
	stores := k.open(t, r.clk, n)
	for i := range n {
		var s admission.Store = follower{stores[0]}
		if i < len(stores) {
			s = stores[i]
		}
		o := admission.Options{Store: s, Clock: r.clk.Now, Meter: r.meter,
			Rand: rand.NewChaCha8([32]byte{byte(i + 1)}), Replica: fmt.Sprintf("r%d", i)}
		for _, f := range set {
			f(i, &o)
		}
		e, err := admission.New(o, cfg)
		if err != nil {
			t.Fatal(err)
		}
		r.engines = append(r.engines, e)
	}
	return r
}

// TestNoShowsIncludeUnusedPasses: 40 visitors wait and poll; every one is
// admitted and takes a pass, but a quarter never bring it to the gate.
// Within the grace those are pending (as are passes taken but not used
// yet), after it they are the no-show rate; the passes used count
// wherever they were used (on the follower too), and a late use counts
// while its offer is in the window.
func TestNoShowsIncludeUnusedPasses(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			cfg := event("show")
			cfg.NoShowGrace = 30 * time.Second
			cfg.Controller.InitialActive = 100 // offer everyone at once
			r := replicas(t, k, 2, cfg)
			lead, other := r.engines[0], r.engines[1]
			r.at(t, time.Second)
			tickets := make([]admission.Ticket, 40)
			for i := range tickets {
				tk, _, err := r.engines[i%2].Join(ctx, "show", admission.JoinRequest{})
				if err != nil {
					t.Fatal(err)
				}
				tickets[i] = tk
			}
			r.at(t, 62*time.Second) // the draw
			passes := map[uint64]*admission.Pass{}
			var firstOffer, lastAdmit time.Duration
			for s := 63; len(passes) < len(tickets); s++ {
				if s > 120 {
					t.Fatalf("%d of %d admitted by %ds", len(passes), len(tickets), s)
				}
				r.at(t, time.Duration(s)*time.Second)
				if firstOffer == 0 && lead.Figures("show").Lanes[admission.PublicLane].Serving > 0 {
					firstOffer = time.Duration(s) * time.Second
				}
				for i := range tickets {
					if passes[tickets[i].Number] != nil && tickets[i].Number != 0 {
						continue
					}
					res, err := r.engines[i%2].Status(ctx, "show", tickets[i])
					if err != nil {
						t.Fatal(err)
					}
					tickets[i] = res.Ticket
					if res.Status.Kind != admission.StatusAdmitted {
						continue
					}
					passes[res.Pass.Number] = res.Pass
					lastAdmit = time.Duration(s) * time.Second
					// A quarter take the pass and never come; the others
					// come through either replica's gate.
					if res.Pass.Number%4 != 0 {
						if !r.engines[int(res.Pass.Number)%2].NoteUse("show", res.Pass) {
							t.Fatal("NoteUse refused a use")
						}
					}
				}
			}
			if lastAdmit-firstOffer > 20*time.Second {
				t.Fatalf("admissions spread over %v: the windows below need them within the grace", lastAdmit-firstOffer)
			}
			// Two ticks: the follower's uses reach the store at its tick,
			// after the leader's.
			r.at(t, lastAdmit+time.Second)
			r.at(t, lastAdmit+2*time.Second)
			if f := lead.Figures("show"); f.Pending != 10 || f.NoShowRate != 0 {
				t.Fatalf("within the grace: pending %d (want the 10 passes taken and never used), no-show rate %v (want 0 yet)",
					f.Pending, f.NoShowRate)
			}
			// Every offer past its grace and within the window.
			at := firstOffer + cfg.NoShowGrace + 21*time.Second
			r.at(t, at)
			if f := lead.Figures("show"); f.Pending != 0 || math.Abs(f.NoShowRate-0.25) > 1e-9 {
				t.Fatalf("after the grace: pending %d (want 0), no-show rate %v (want 10 of 40)", f.Pending, f.NoShowRate)
			}
			if f := other.Figures("show"); f.Leader {
				t.Fatal("the second replica leads")
			}
			// One of them comes after all, through the follower: no longer
			// a no-show once both replicas ticked.
			if !other.NoteUse("show", passes[4]) {
				t.Fatal("NoteUse refused a late use")
			}
			r.at(t, at+time.Second)
			r.at(t, at+2*time.Second)
			if f := lead.Figures("show"); math.Abs(f.NoShowRate-0.225) > 1e-9 {
				t.Fatalf("after a late use: no-show rate %v (want 9 of 40)", f.NoShowRate)
			}
			for _, e := range r.engines {
				if f := e.Figures("show"); f.UsesDropped != 0 {
					t.Fatalf("%d uses dropped", f.UsesDropped)
				}
			}
		})
	}
}

// usesStore counts the numbers given to MarkUsed, and fails it while
// fail is set.
type usesStore struct {
	admission.Store
	mu     sync.Mutex
	marked []uint64
	fail   bool
}

func (s *usesStore) MarkUsed(ctx context.Context, event, lane string, numbers []uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return fmt.Errorf("usesStore: %w", admission.ErrStoreDown)
	}
	s.marked = append(s.marked, numbers...)
	return s.Store.MarkUsed(ctx, event, lane, numbers)
}

func (s *usesStore) take() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.marked
	s.marked = nil
	return out
}

func newUsesRig(t *testing.T) (*admission.Engine, *usesStore, *fakeclock.Clock) {
	t.Helper()
	clk := fakeclock.New(t0)
	ms, err := memstore.Open(memstore.Options{Dir: t.TempDir(), Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ms.Close() })
	s := &usesStore{Store: ms}
	e, err := admission.New(admission.Options{Store: s, Clock: clk.Now, Replica: "a",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, event("show"))
	if err != nil {
		t.Fatal(err)
	}
	return e, s, clk
}

// TestNoteUseOnce: a number is written once however many of its passes
// are used on this replica (renewed, or minted by another poll); passes
// without a number, and unknown events and lanes, are taken and written
// nowhere; a failed write is kept for the next tick.
func TestNoteUseOnce(t *testing.T) {
	e, s, clk := newUsesRig(t)
	clk.Set(t0.Add(time.Second))
	for range 3 {
		e.Join(ctx, "show", admission.JoinRequest{})
	}
	clk.Set(t0.Add(62 * time.Second))
	if err := e.Tick(ctx); err != nil { // the draw: numbers 1..3
		t.Fatal(err)
	}
	s.take()
	pass := func(lane string, n uint64) *admission.Pass {
		return &admission.Pass{Event: "show", Lane: lane, Number: n}
	}
	for _, p := range []*admission.Pass{pass("public", 2), pass("public", 2), pass("public", 2), pass("public", 0),
		pass("nope", 1), pass("public", 3)} {
		if !e.NoteUse("show", p) {
			t.Fatalf("NoteUse(%+v) refused", p)
		}
	}
	if !e.NoteUse("no-such-event", pass("public", 1)) {
		t.Fatal("NoteUse of an unknown event refused")
	}
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.take(); len(got) != 2 || got[0]+got[1] != 5 {
		t.Fatalf("written %v, want 2 and 3 once each", got)
	}
	// Noted again after the write: nothing new to write.
	e.NoteUse("show", pass("public", 2))
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.take(); len(got) != 0 {
		t.Fatalf("written %v again", got)
	}

	// The store fails: the use is kept, and written once it is back.
	s.mu.Lock()
	s.fail = true
	s.mu.Unlock()
	e.NoteUse("show", pass("public", 1))
	if err := e.Tick(ctx); !errors.Is(err, admission.ErrStoreDown) {
		t.Fatalf("tick with a failing store: %v", err)
	}
	s.mu.Lock()
	s.fail = false
	s.mu.Unlock()
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.take(); len(got) != 1 || got[0] != 1 {
		t.Fatalf("after the store came back: written %v, want [1]", got)
	}
	used, err := s.Used(ctx, "show", "public", 1, 4)
	if err != nil || fmt.Sprint(used) != "[true true true false]" {
		t.Fatalf("Used = %v, %v", used, err)
	}
}

// TestNoteUseBufferBounded: between two ticks a replica buffers at most
// a batch of first uses; more are refused at once (the caller tries
// again at the next request) and counted, and the next tick makes room.
func TestNoteUseBufferBounded(t *testing.T) {
	e, s, _ := newUsesRig(t)
	// Numbers not drawn here are not remembered: each is buffered.
	for n := range uint64(admission.MaxUseBatch) {
		if !e.NoteUse("show", &admission.Pass{Lane: "public", Number: n + 1}) {
			t.Fatalf("use %d refused", n+1)
		}
	}
	over := &admission.Pass{Lane: "public", Number: admission.MaxUseBatch + 1}
	for range 2 { // the visitor's next request tries again
		if e.NoteUse("show", over) {
			t.Fatal("a use past the buffer was taken")
		}
	}
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(s.take()); got != admission.MaxUseBatch {
		t.Fatalf("%d uses written, want %d", got, admission.MaxUseBatch)
	}
	if f := e.Figures("show"); f.UsesDropped != 2 {
		t.Fatalf("UsesDropped = %d, want 2", f.UsesDropped)
	}
	if !e.NoteUse("show", over) {
		t.Fatal("the next request's use refused after the tick")
	}
}

// TestNoteUseAllocs: taking a use allocates nothing once the buffers have
// grown (the proxy calls it on a request's path).
func TestNoteUseAllocs(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("allocation counts are not meaningful under -race; make test runs this without it")
	}
	e, _, _ := newUsesRig(t)
	n := uint64(0)
	note := func() {
		n++
		e.NoteUse("show", &admission.Pass{Lane: "public", Number: n})
	}
	for range 2 { // both buffers grow
		for range 1000 {
			note()
		}
		if err := e.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if a := testing.AllocsPerRun(500, note); a != 0 {
		t.Fatalf("NoteUse allocates %.2f times", a)
	}
}
