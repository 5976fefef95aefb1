package admission_test

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/memstore"
	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
)

var ctx = context.Background()

// meter reports a healthy origin with a given number of active visitors.
type meter struct {
	mu sync.Mutex
	m  admission.Measurements
}

func (m *meter) Measure(string, time.Time) admission.Measurements {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m
}

type inventory struct {
	mu   sync.Mutex
	left int
}

func (i *inventory) Remaining(string) (int, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.left, true
}

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

type rig struct {
	clk   *fakeclock.Clock
	meter *meter
	store *memstore.Store
	e     *admission.Engine
	dir   string
}

func newRig(t *testing.T, cfgs ...admission.EventConfig) *rig {
	t.Helper()
	r := &rig{clk: fakeclock.New(t0.Add(-10 * time.Second)), meter: &meter{}, dir: t.TempDir()}
	r.meter.m = admission.Measurements{LatencyP50: 20 * time.Millisecond, LatencyP95: 50 * time.Millisecond, RequestRate: 10}
	r.open(t, cfgs...)
	return r
}

func (r *rig) open(t *testing.T, cfgs ...admission.EventConfig) {
	t.Helper()
	s, err := memstore.Open(memstore.Options{Dir: r.dir, Clock: r.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r.store = s
	seed := uint64(len(cfgs) + 1)
	e, err := admission.New(admission.Options{Store: s, Clock: r.clk.Now, Meter: r.meter,
		Rand: rand.NewChaCha8([32]byte{byte(seed)}), Replica: "test"}, cfgs...)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
}

// at moves the clock to t0+d and ticks.
func (r *rig) at(t *testing.T, d time.Duration) {
	t.Helper()
	if now := r.clk.Now(); t0.Add(d).After(now) {
		r.clk.Add(t0.Add(d).Sub(now))
	}
	if err := r.e.Tick(ctx); err != nil {
		t.Fatalf("Tick: %v", err)
	}
}

func event(id string) admission.EventConfig {
	return admission.EventConfig{ID: id, QueueOpensAt: t0, OnSaleAt: t0.Add(time.Minute),
		Controller: admission.ControllerConfig{InitialActive: 10, MinActive: 5}}
}

func (r *rig) join(t *testing.T, ev string, req admission.JoinRequest) admission.Ticket {
	t.Helper()
	tk, _, err := r.e.Join(ctx, ev, req)
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	return tk
}

func (r *rig) status(t *testing.T, ev string, tk *admission.Ticket) admission.StatusResult {
	t.Helper()
	res, err := r.e.Status(ctx, ev, *tk)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	*tk = res.Ticket
	return res
}

func TestEngineFlow(t *testing.T) {
	r := newRig(t, event("show"))
	if _, _, err := r.e.Join(ctx, "show", admission.JoinRequest{}); !errors.Is(err, admission.ErrNotOpen) {
		t.Fatalf("join before the queue opens: %v", err)
	}
	r.at(t, time.Second)
	tickets := make([]admission.Ticket, 50)
	for i := range tickets {
		tickets[i] = r.join(t, "show", admission.JoinRequest{Binding: "b"})
		if tickets[i].Tranche != 0 || tickets[i].Number != 0 {
			t.Fatalf("pre-queue ticket = %+v", tickets[i])
		}
	}
	res := r.status(t, "show", &tickets[0])
	if res.Status.Kind != admission.StatusPrequeue || !res.Status.DrawAt.Equal(t0.Add(61*time.Second)) {
		t.Fatalf("pre-queue status = %+v", res.Status)
	}
	// The draw happens at the first tick after the on-sale and the margin.
	r.at(t, 61*time.Second)
	r.at(t, 62*time.Second)
	numbers := map[uint64]bool{}
	for i := range tickets {
		res := r.status(t, "show", &tickets[i])
		if !res.Renewed || tickets[i].Number == 0 || numbers[tickets[i].Number] {
			t.Fatalf("after the draw: %+v renewed=%v", tickets[i], res.Renewed)
		}
		numbers[tickets[i].Number] = true
	}
	for n := uint64(1); n <= 50; n++ {
		if !numbers[n] {
			t.Fatalf("number %d not given out", n)
		}
	}
	// Admission: the controller lets some in each tick; everyone gets in.
	admitted := map[int]bool{}
	for s := 63; s < 400 && len(admitted) < 50; s++ {
		r.at(t, time.Duration(s)*time.Second)
		for i := range tickets {
			if admitted[i] {
				continue
			}
			res := r.status(t, "show", &tickets[i])
			switch res.Status.Kind {
			case admission.StatusAdmitted:
				if res.Pass == nil || res.Pass.Number != tickets[i].Number || res.Pass.Binding != "b" {
					t.Fatalf("admitted without a proper pass: %+v", res)
				}
				admitted[i] = true
			case admission.StatusWaiting:
				if res.Status.Position < 0 {
					t.Fatalf("waiting at position %d", res.Status.Position)
				}
			default:
				t.Fatalf("status %s", res.Status.Kind)
			}
		}
	}
	if len(admitted) != 50 {
		t.Fatalf("%d of 50 admitted", len(admitted))
	}
	f := r.e.Figures("show")
	if f.State != admission.StateSelling || !f.Leader || f.Lanes["public"].Serving < 50 {
		t.Fatalf("figures = %+v", f)
	}
}

func TestTrancheOrderAndRejoin(t *testing.T) {
	r := newRig(t, event("show"))
	r.at(t, 30*time.Second)
	pre := r.join(t, "show", admission.JoinRequest{})
	r.at(t, 61*time.Second) // tranche 1: [60s, 65s)
	first := r.join(t, "show", admission.JoinRequest{})
	r.at(t, 66*time.Second) // tranche 2
	second := r.join(t, "show", admission.JoinRequest{})
	if first.Tranche != 1 || second.Tranche != 2 {
		t.Fatalf("tranches %d, %d", first.Tranche, second.Tranche)
	}
	again, _, err := r.e.Join(ctx, "show", admission.JoinRequest{Existing: &first})
	if err != nil || again.Visitor != first.Visitor || again.Tranche != first.Tranche {
		t.Fatalf("rejoin with a ticket = %+v, %v; want the same place", again, err)
	}
	for s := 67; s <= 75; s++ {
		r.at(t, time.Duration(s)*time.Second)
	}
	r.status(t, "show", &pre)
	r.status(t, "show", &first)
	r.status(t, "show", &second)
	if !(pre.Number < first.Number && first.Number < second.Number) {
		t.Fatalf("tranche order not kept: %d, %d, %d", pre.Number, first.Number, second.Number)
	}
}

func TestStatusAllocatesNothing(t *testing.T) {
	r := newRig(t, event("show"))
	r.at(t, time.Second)
	var tickets []admission.Ticket
	for range 200 {
		tickets = append(tickets, r.join(t, "show", admission.JoinRequest{}))
	}
	r.at(t, 62*time.Second)
	last := tickets[0]
	for i := range tickets {
		r.status(t, "show", &tickets[i])
		if tickets[i].Number > last.Number {
			last = tickets[i]
		}
	}
	allocs := testing.AllocsPerRun(1000, func() {
		res, err := r.e.Status(ctx, "show", last)
		if err != nil || res.Status.Kind != admission.StatusWaiting {
			t.Fatalf("%+v %v", res.Status, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Status of a drawn ticket allocates %.1f times", allocs)
	}
}

// TestStatusAtKeepsAnInjectedClock: a reading the caller passes is used
// only with the real clock; an engine on an injected clock (the
// simulator's, a test's) keeps to its own.
func TestStatusAtKeepsAnInjectedClock(t *testing.T) {
	r := newRig(t, event("show"))
	r.at(t, time.Second)
	tk := r.join(t, "show", admission.JoinRequest{})
	want, err := r.e.Status(ctx, "show", tk)
	if err != nil || want.Status.Kind != admission.StatusPrequeue {
		t.Fatalf("Status = %+v, %v; want prequeue", want.Status, err)
	}
	for _, now := range []time.Time{{}, t0.Add(2 * time.Hour), t0.Add(-time.Hour)} {
		got, err := r.e.StatusAt(ctx, "show", tk, now)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("StatusAt(%v) = %+v, %v; want %+v", now, got, err, want)
		}
	}
}

func TestSoldOutPausedClosed(t *testing.T) {
	cfg := event("show")
	cfg.InventoryEvent = "show"
	cfg.ClosesAt = t0.Add(time.Hour)
	r := newRig(t, cfg)
	inv := &inventory{left: 5}
	e, err := admission.New(admission.Options{Store: r.store, Clock: r.clk.Now, Meter: r.meter, Inventory: inv,
		Rand: rand.NewChaCha8([32]byte{9}), Replica: "inv"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	r.at(t, time.Second)
	var tickets []admission.Ticket
	for range 20 {
		tickets = append(tickets, r.join(t, "show", admission.JoinRequest{}))
	}
	r.at(t, 62*time.Second)
	for i := range tickets {
		r.status(t, "show", &tickets[i])
	}
	if err := r.e.SetControl(ctx, "show", admission.Control{Paused: true}); err != nil {
		t.Fatal(err)
	}
	before := r.e.Figures("show").Lanes["public"].Serving
	r.at(t, 63*time.Second)
	r.at(t, 64*time.Second)
	if f := r.e.Figures("show"); f.State != admission.StatePaused || f.Lanes["public"].Serving != before {
		t.Fatalf("paused figures = %+v (serving was %d)", f, before)
	}
	if res := r.status(t, "show", &tickets[0]); res.Status.Kind != admission.StatusPaused {
		t.Fatalf("paused status = %+v", res.Status)
	}
	r.e.SetControl(ctx, "show", admission.Control{})
	r.at(t, 65*time.Second)
	inv.mu.Lock()
	inv.left = 0
	inv.mu.Unlock()
	r.at(t, 66*time.Second)
	var waiting *admission.Ticket
	for i := range tickets {
		if res := r.status(t, "show", &tickets[i]); res.Status.Kind != admission.StatusAdmitted {
			waiting = &tickets[i]
			if res.Status.Kind != admission.StatusSoldOut {
				t.Fatalf("a waiting visitor after the last seat sold sees %s", res.Status.Kind)
			}
		}
	}
	if waiting == nil {
		t.Fatal("everyone was admitted; the test needs someone waiting")
	}
	if _, _, err := r.e.Join(ctx, "show", admission.JoinRequest{}); !errors.Is(err, admission.ErrSoldOut) {
		t.Fatalf("join when sold out: %v", err)
	}
	r.at(t, 2*time.Hour)
	if res := r.status(t, "show", waiting); res.Status.Kind != admission.StatusClosed {
		t.Fatalf("after closes_at: %+v", res.Status)
	}
}

func TestPresaleLane(t *testing.T) {
	secret := []byte("invite-secret-0123456789abcdefghij")
	acctSecret := []byte("account-secret-0123456789abcdefgh")
	cfg := event("show")
	cfg.Lanes = []admission.LaneConfig{{Name: "presale", Priority: true, Access: admission.LaneAccess{
		InviteSecret: secret, AccountSecret: acctSecret, Allowlist: admission.NewAllowlist([]string{"fan-1"})}}}
	r := newRig(t, cfg)
	r.at(t, time.Second)
	if _, _, err := r.e.Join(ctx, "show", admission.JoinRequest{Lane: "presale"}); !errors.Is(err, admission.ErrNotAllowed) {
		t.Fatalf("presale without a credential: %v", err)
	}
	invite := admission.MakeInvite(secret, "show", "code-1", "")
	pre := r.join(t, "show", admission.JoinRequest{Lane: "presale", Credential: admission.Credential{Invite: invite}})
	if _, _, err := r.e.Join(ctx, "show", admission.JoinRequest{Lane: "presale", Credential: admission.Credential{Invite: invite}}); !errors.Is(err, admission.ErrInviteUsed) {
		t.Fatalf("second use of an invite: %v", err)
	}
	listed := admission.Credential{Account: "fan-1", AccountProof: admission.MakeAccountProof(acctSecret, "show", "fan-1")}
	fan := r.join(t, "show", admission.JoinRequest{Lane: "presale", Credential: listed})
	unlisted := admission.Credential{Account: "fan-2", AccountProof: admission.MakeAccountProof(acctSecret, "show", "fan-2")}
	if _, _, err := r.e.Join(ctx, "show", admission.JoinRequest{Lane: "presale", Credential: unlisted}); !errors.Is(err, admission.ErrNotAllowed) {
		t.Fatalf("account not on the allowlist: %v", err)
	}
	forged := admission.Credential{Account: "fan-1", AccountProof: "AAAA"}
	if _, _, err := r.e.Join(ctx, "show", admission.JoinRequest{Lane: "presale", Credential: forged}); !errors.Is(err, admission.ErrNotAllowed) {
		t.Fatalf("forged account proof: %v", err)
	}
	var public []admission.Ticket
	for range 30 {
		public = append(public, r.join(t, "show", admission.JoinRequest{}))
	}
	r.at(t, 62*time.Second)
	r.status(t, "show", &pre)
	r.status(t, "show", &fan)
	if pre.Lane != "presale" || pre.Number > 2 || fan.Number > 2 {
		t.Fatalf("presale numbers: %+v %+v", pre, fan)
	}
	for i := range public {
		r.status(t, "show", &public[i])
	}
	r.at(t, 63*time.Second)
	// The priority lane goes first: both presale visitors are in before
	// the public lane has used all of the first ticks' admissions.
	if res := r.status(t, "show", &pre); res.Status.Kind != admission.StatusAdmitted {
		t.Fatalf("presale visitor after the first admissions: %+v", res.Status)
	}
	if res := r.status(t, "show", &fan); res.Status.Kind != admission.StatusAdmitted {
		t.Fatalf("presale fan after the first admissions: %+v", res.Status)
	}
}

func TestNoShowsAndLateReturn(t *testing.T) {
	cfg := event("show")
	cfg.NoShowGrace = 30 * time.Second
	r := newRig(t, cfg)
	r.at(t, time.Second)
	var tickets []admission.Ticket
	for range 40 {
		tickets = append(tickets, r.join(t, "show", admission.JoinRequest{}))
	}
	r.at(t, 62*time.Second)
	for i := range tickets {
		r.status(t, "show", &tickets[i])
	}
	slices.SortFunc(tickets, func(a, b admission.Ticket) int { return int(a.Number) - int(b.Number) })
	// The last 10 numbers never come back; the rest keep polling.
	present, gone := tickets[:30], tickets[30:]
	came := map[uint64]bool{}
	for s := 63; s < 400 && len(came) < len(present); s++ {
		r.at(t, time.Duration(s)*time.Second)
		for i := range present {
			if res := r.status(t, "show", &present[i]); res.Status.Kind == admission.StatusAdmitted {
				came[present[i].Number] = true
			}
		}
	}
	if len(came) != len(present) {
		t.Fatalf("%d of %d present visitors admitted", len(came), len(present))
	}
	// The counter passes the absent ones (they polled last at the draw,
	// more than a grace ago, so they are passed over at once).
	r.at(t, 200*time.Second)
	if f := r.e.Figures("show").Lanes["public"]; f.Serving < 40 {
		t.Fatalf("the counter did not pass the absent visitors: %+v", f)
	}
	// One comes back well after their grace: waiting now, in at the next
	// tick, never losing the place.
	r.at(t, 300*time.Second)
	late := gone[0]
	res := r.status(t, "show", &late)
	if res.Status.Kind != admission.StatusWaiting || res.Status.Position != 0 || res.Pass != nil {
		t.Fatalf("late returner before the next tick: %+v", res.Status)
	}
	r.at(t, 301*time.Second)
	if res := r.status(t, "show", &late); res.Status.Kind != admission.StatusAdmitted || res.Pass == nil {
		t.Fatalf("late returner after the next tick: %+v", res.Status)
	}
	if f := r.e.Figures("show"); f.NoShowRate <= 0 {
		t.Logf("figures: %+v", f)
	}
}

func TestAudit(t *testing.T) {
	r := newRig(t, event("show"))
	r.at(t, time.Second)
	a, err := r.e.Audit(ctx, "show", "public", 0, 0, 100)
	if err != nil || a.Drawn || a.Seed != nil {
		t.Fatalf("audit before the draw = %+v, %v", a, err)
	}
	commitment := a.Commitment
	var tickets []admission.Ticket
	for range 25 {
		tickets = append(tickets, r.join(t, "show", admission.JoinRequest{}))
	}
	r.at(t, 62*time.Second)
	a, err = r.e.Audit(ctx, "show", "public", 0, 0, 100)
	if err != nil || !a.Drawn || a.Count != 25 || len(a.Hashes) != 25 || a.Commitment != commitment {
		t.Fatalf("audit after the draw = %+v, %v", a, err)
	}
	if !admission.CheckAudit(commitment, a.Seed, a.Hashes) {
		t.Fatal("the published draw does not check")
	}
	for i := range tickets {
		r.status(t, "show", &tickets[i])
		h := admission.VisitorHash(tickets[i].Visitor)
		if a.Hashes[tickets[i].Number-a.First] != h {
			t.Fatalf("visitor with number %d is not at its place in the audit", tickets[i].Number)
		}
	}
	page, _ := r.e.Audit(ctx, "show", "public", 0, 10, 5)
	if page.Offset != 10 || len(page.Hashes) != 5 || page.Hashes[0] != a.Hashes[10] {
		t.Fatalf("audit page = %+v", page)
	}
}

func TestRestartKeepsNumbersAndServing(t *testing.T) {
	r := newRig(t, event("show"))
	r.at(t, time.Second)
	var tickets []admission.Ticket
	for range 30 {
		tickets = append(tickets, r.join(t, "show", admission.JoinRequest{}))
	}
	r.at(t, 62*time.Second)
	for s := 63; s < 70; s++ {
		r.at(t, time.Duration(s)*time.Second)
	}
	for i := range tickets {
		r.status(t, "show", &tickets[i])
	}
	before := r.e.Figures("show").Lanes["public"]
	if before.Serving == 0 {
		t.Fatal("nobody admitted before the restart")
	}
	r.store.Close()
	r.open(t, event("show"))
	r.at(t, 70*time.Second)
	after := r.e.Figures("show").Lanes["public"]
	if after.Serving < before.Serving || after.Drawn != before.Drawn {
		t.Fatalf("after restart %+v, before %+v", after, before)
	}
	for _, tk := range tickets {
		fresh := tk
		fresh.Number = 0 // a ticket from before the draw finds the same number
		r.status(t, "show", &fresh)
		if fresh.Number != tk.Number {
			t.Fatalf("number changed across a restart: %d → %d", tk.Number, fresh.Number)
		}
	}
}

func BenchmarkStatus(b *testing.B) {
	clk := fakeclock.New(t0)
	s, err := memstore.Open(memstore.Options{Dir: b.TempDir(), Clock: clk.Now})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	e, err := admission.New(admission.Options{Store: s, Clock: clk.Now, Meter: &meter{}, Replica: "bench"}, event("show"))
	if err != nil {
		b.Fatal(err)
	}
	clk.Add(time.Second)
	var tk admission.Ticket
	for range 100 {
		tk, _, _ = e.Join(ctx, "show", admission.JoinRequest{})
	}
	clk.Add(62 * time.Second)
	e.Tick(ctx)
	res, _ := e.Status(ctx, "show", tk)
	tk = res.Ticket
	b.ReportAllocs()
	for b.Loop() {
		e.Status(ctx, "show", tk)
	}
}

// TestLaneShares: two lanes sharing admissions 70/30 while both have
// visitors waiting; a lane with nobody left gives its share away.
func TestLaneShares(t *testing.T) {
	secret := []byte("invite-secret-0123456789abcdefghij")
	cfg := event("show")
	cfg.Controller.InitialActive = 40
	cfg.Lanes = []admission.LaneConfig{
		{Name: "presale", Share: 0.7, Access: admission.LaneAccess{InviteSecret: secret}},
		{Name: "public", Share: 0.3},
	}
	r := newRig(t, cfg)
	r.at(t, time.Second)
	for i := range 200 {
		invite := admission.MakeInvite(secret, "show", fmt.Sprintf("code-%d", i), "")
		r.join(t, "show", admission.JoinRequest{Lane: "presale", Credential: admission.Credential{Invite: invite}})
		r.join(t, "show", admission.JoinRequest{})
	}
	r.at(t, 62*time.Second)
	f := r.e.Figures("show").Lanes
	pre, pub := f["presale"].Serving, f["public"].Serving
	if pre+pub == 0 {
		t.Fatal("nobody admitted")
	}
	if share := float64(pre) / float64(pre+pub); share < 0.6 || share > 0.8 {
		t.Fatalf("presale got %d and public %d of the first admissions: %.0f%%, want about 70%%", pre, pub, 100*share)
	}
}

func TestUpdateControl(t *testing.T) {
	r := newRig(t, event("show"))
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := r.e.UpdateControl(ctx, "show", func(c *admission.Control) {
				if i%2 == 0 {
					c.Paused = true
				} else {
					c.Caps = &admission.Caps{MaxActive: 7}
				}
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	c, err := r.e.Control("show")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Paused || c.Caps == nil || c.Caps.MaxActive != 7 {
		t.Fatalf("concurrent updates undid each other: %+v", c)
	}
	// The control is durable: a restarted engine on the same store has it.
	r.store.Close()
	r.open(t, event("show"))
	r.at(t, time.Second)
	if c, _ := r.e.Control("show"); !c.Paused || c.Caps == nil || c.Caps.MaxActive != 7 {
		t.Fatalf("after a restart the control is %+v", c)
	}
	got, err := r.e.UpdateControl(ctx, "show", func(c *admission.Control) { c.Caps = nil; c.Paused = false })
	if err != nil || got.Paused || got.Caps != nil {
		t.Fatalf("UpdateControl = %+v, %v", got, err)
	}
	if cfg, err := r.e.Config("show"); err != nil || cfg.ID != "show" || cfg.Tranche == 0 {
		t.Fatalf("Config = %+v, %v", cfg, err)
	}
	if _, err := r.e.UpdateControl(ctx, "nope", func(*admission.Control) {}); !errors.Is(err, admission.ErrUnknownEvent) {
		t.Fatalf("unknown event: %v", err)
	}
}

// TestPositionCountsThoseAhead: a waiting visitor's position is the
// number of people ahead in the line, so the next in line is at 0 and
// the page can say "You're next"; positions run 0, 1, 2, … in number
// order and fall by one as each one ahead is admitted.
func TestPositionCountsThoseAhead(t *testing.T) {
	r := newRig(t, event("show"))
	r.at(t, time.Second)
	tickets := make([]admission.Ticket, 4)
	for i := range tickets {
		tickets[i] = r.join(t, "show", admission.JoinRequest{})
	}
	// Paused from before the sale: the draw orders everyone, nobody is
	// admitted.
	if err := r.e.SetControl(ctx, "show", admission.Control{Paused: true}); err != nil {
		t.Fatal(err)
	}
	r.at(t, 62*time.Second)
	byPosition := map[int64]uint64{}
	for i := range tickets {
		res := r.status(t, "show", &tickets[i])
		if res.Status.Kind != admission.StatusPaused || res.Pass != nil {
			t.Fatalf("status while paused: %+v", res.Status)
		}
		if want := int64(tickets[i].Number) - 1; res.Status.Position != want {
			t.Fatalf("number %d at position %d, want %d (the people ahead of it)", tickets[i].Number, res.Status.Position, want)
		}
		byPosition[res.Status.Position] = tickets[i].Number
	}
	if len(byPosition) != len(tickets) || byPosition[0] != 1 {
		t.Fatalf("positions by number: %v", byPosition)
	}
	// Let one in: the one who was next is admitted, and whoever was one
	// behind is next now.
	if err := r.e.SetControl(ctx, "show", admission.Control{}); err != nil {
		t.Fatal(err)
	}
	for s := 63; s < 200 && r.e.Figures("show").Lanes["public"].Serving == 0; s++ {
		r.at(t, time.Duration(s)*time.Second)
	}
	serving := r.e.Figures("show").Lanes["public"].Serving
	if serving == 0 {
		t.Fatal("nobody was admitted after the pause ended")
	}
	for i := range tickets {
		res := r.status(t, "show", &tickets[i])
		n := tickets[i].Number
		switch {
		case n <= serving:
			if res.Status.Kind != admission.StatusAdmitted || res.Status.Position != 0 {
				t.Fatalf("number %d with the counter at %d: %+v", n, serving, res.Status)
			}
		default:
			if res.Status.Kind != admission.StatusWaiting || res.Status.Position != int64(n-serving-1) {
				t.Fatalf("number %d with the counter at %d: %+v, want position %d", n, serving, res.Status, n-serving-1)
			}
		}
	}
}

// TestInviteWithoutLane: a visitor gives a code, not a lane: the engine
// finds the lane whose secret signed it. A code redeems once; the same
// visitor joining again keeps their place without spending another code;
// a visitor in the public queue who enters a code moves to the presale.
func TestInviteWithoutLane(t *testing.T) {
	preSecret, vipSecret := randomBytes(32), randomBytes(32)
	cfg := event("show")
	cfg.Lanes = []admission.LaneConfig{
		{Name: "presale", Priority: true, Access: admission.LaneAccess{InviteSecret: preSecret}},
		{Name: "vip", Priority: true, Access: admission.LaneAccess{InviteSecret: vipSecret}},
	}
	r := newRig(t, cfg)
	r.at(t, time.Second)
	code := admission.MakeShortInvite(vipSecret, "show", [admission.ShortInviteIDLen]byte{1})
	typed := " " + strings.ToLower(strings.ReplaceAll(code, "-", " ")) + "\n"
	vip := r.join(t, "show", admission.JoinRequest{Credential: admission.Credential{Invite: typed}})
	if vip.Lane != "vip" {
		t.Fatalf("a vip code joined lane %q", vip.Lane)
	}
	again, err := r.e.Arrive(ctx, "show", admission.JoinRequest{Existing: &vip, Credential: admission.Credential{Invite: code}})
	if err != nil || again.Outcome != admission.OutcomeRejoined || again.Ticket.Visitor != vip.Visitor {
		t.Fatalf("the same visitor with the same code: %+v, %v", again, err)
	}
	if _, err := r.e.Arrive(ctx, "show", admission.JoinRequest{Credential: admission.Credential{Invite: code}}); !errors.Is(err, admission.ErrInviteUsed) {
		t.Fatalf("a second visitor with a used code: %v", err)
	}
	for _, bad := range []string{"AAAA-AAAA-AAAA-AAAA-AAAA-AAAA", "nonsense", " \t", strings.Repeat("x", 5000)} {
		if _, err := r.e.Arrive(ctx, "show", admission.JoinRequest{Credential: admission.Credential{Invite: bad}}); !errors.Is(err, admission.ErrNotAllowed) {
			t.Fatalf("wrong code %.20q: %v", bad, err)
		}
	}
	public := r.join(t, "show", admission.JoinRequest{})
	if _, err := r.e.Arrive(ctx, "show", admission.JoinRequest{Existing: &public, Credential: admission.Credential{Invite: "AAAA-AAAA-AAAA-AAAA-AAAA-AAAA"}}); !errors.Is(err, admission.ErrNotAllowed) {
		t.Fatalf("a public visitor's wrong code: %v", err)
	}
	moved, err := r.e.Arrive(ctx, "show", admission.JoinRequest{Existing: &public,
		Credential: admission.Credential{Invite: admission.MakeShortInvite(preSecret, "show", [admission.ShortInviteIDLen]byte{2})}})
	if err != nil || moved.Outcome != admission.OutcomeJoined || moved.Ticket.Lane != "presale" || !moved.Issue {
		t.Fatalf("a public visitor entering a presale code: %+v, %v", moved, err)
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	crand.Read(b)
	return b
}
