package admission_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// selling brings r's "show" to selling with n visitors drawn and the
// first admissions made; it returns their tickets.
func selling(t *testing.T, r *rig, n int) []admission.Ticket {
	t.Helper()
	r.at(t, time.Second)
	tickets := make([]admission.Ticket, n)
	for i := range tickets {
		tickets[i] = r.join(t, "show", admission.JoinRequest{Binding: "b"})
	}
	for s := 61; s <= 66; s++ {
		r.at(t, time.Duration(s)*time.Second)
	}
	for i := range tickets {
		r.status(t, "show", &tickets[i])
		if tickets[i].Number == 0 {
			t.Fatalf("ticket %d not drawn: %+v", i, tickets[i])
		}
	}
	return tickets
}

// TestApplyKeepsState runs two engines through the same sale; one of
// them has its event set applied mid-sale (one event changed in what the
// controller does not read, one added, one removed). Every figure of the
// kept event must stay what the untouched engine shows, tick after tick:
// queue, serving counter, controller limit, admissions.
func TestApplyKeepsState(t *testing.T) {
	gone := event("gone")
	a := newRig(t, event("show"), gone)
	b := newRig(t, event("show"), gone)
	ta, tb := selling(t, a, 40), selling(t, b, 40)

	changed := event("show")
	changed.CompleteGrace = 45 * time.Second
	fresh := event("fresh")
	res, err := a.e.Apply([]admission.EventConfig{changed, fresh})
	if err != nil {
		t.Fatal(err)
	}
	want := admission.Applied{Added: []string{"fresh"}, Changed: []string{"show"}, Removed: []string{"gone"}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("Apply = %+v, want %+v", res, want)
	}
	if got := a.e.Events(); !slices.Equal(got, []string{"fresh", "show"}) {
		t.Fatalf("events after Apply = %v", got)
	}
	if cfg, _ := a.e.Config("show"); cfg.CompleteGrace != 45*time.Second {
		t.Fatalf("show's config not installed: %+v", cfg)
	}
	// The removed event fails closed.
	if a.e.Gate("gone") != nil {
		t.Fatal("a removed event still has a gate")
	}
	if _, _, err := a.e.Join(ctx, "gone", admission.JoinRequest{}); !errors.Is(err, admission.ErrUnknownEvent) {
		t.Fatalf("join a removed event: %v", err)
	}
	if _, _, err := a.e.Join(ctx, "fresh", admission.JoinRequest{}); err != nil {
		t.Fatalf("join the added event: %v", err)
	}

	admitted := 0
	for s := 67; s < 200; s++ {
		a.at(t, time.Duration(s)*time.Second)
		b.at(t, time.Duration(s)*time.Second)
		fa, fb := a.e.Figures("show"), b.e.Figures("show")
		if fa.Limit != fb.Limit || fa.Lanes["public"] != fb.Lanes["public"] || fa.Admitted1m != fb.Admitted1m {
			t.Fatalf("t=%ds: figures after Apply %+v, untouched %+v", s, fa, fb)
		}
		for i := range ta {
			ra, rb := a.status(t, "show", &ta[i]), b.status(t, "show", &tb[i])
			if ta[i].Number != tb[i].Number || ra.Status.Kind != rb.Status.Kind || ra.Status.Position != rb.Status.Position {
				t.Fatalf("t=%ds visitor %d: %+v %+v after Apply, %+v %+v untouched", s, i, ta[i], ra.Status, tb[i], rb.Status)
			}
			if ra.Pass != nil {
				admitted++
			}
		}
	}
	if admitted == 0 {
		t.Fatal("nobody was admitted: the comparison measured nothing")
	}
}

// TestApplyCapsAtNextTick: a changed cap bounds the controller from the
// event's next tick, and the controller keeps its limit otherwise.
func TestApplyCapsAtNextTick(t *testing.T) {
	r := newRig(t, event("show"))
	selling(t, r, 60)
	for s := 67; s < 90; s++ {
		r.at(t, time.Duration(s)*time.Second)
	}
	before := r.e.Figures("show").Limit
	if before <= 10 {
		t.Fatalf("limit %d: the controller has not grown, the test would measure nothing", before)
	}
	capped := event("show")
	capped.Caps.MaxActive = before - 3
	if _, err := r.e.Apply([]admission.EventConfig{capped}); err != nil {
		t.Fatal(err)
	}
	if got := r.e.Figures("show").Limit; got != before {
		t.Fatalf("limit right after Apply = %d, want %d (unchanged until the tick)", got, before)
	}
	r.at(t, 90*time.Second)
	if got := r.e.Figures("show").Limit; got != before-3 {
		t.Fatalf("limit after the tick = %d, want the cap %d", got, before-3)
	}
	// Lifting the cap again: the controller goes on from where it was,
	// not from its initial limit.
	if _, err := r.e.Apply([]admission.EventConfig{event("show")}); err != nil {
		t.Fatal(err)
	}
	r.at(t, 91*time.Second)
	if got := r.e.Figures("show").Limit; got < before-3 {
		t.Fatalf("limit after lifting the cap = %d, below %d", got, before-3)
	}
}

// TestApplyRefusedAsAWhole: every problem is reported and nothing
// changes.
func TestApplyRefusedAsAWhole(t *testing.T) {
	r := newRig(t, event("show"), event("other"))
	r.at(t, time.Second) // show's queue is open
	moved := event("show")
	moved.OnSaleAt = moved.OnSaleAt.Add(time.Minute)
	moved.Lanes = []admission.LaneConfig{{Name: "presale", Priority: true}}
	bad := event("bad")
	bad.Mode = "sometimes"
	changed := event("other")
	changed.Caps.MaxActive = 5
	_, err := r.e.Apply([]admission.EventConfig{moved, bad, changed, event("other"), {}})
	if !errors.Is(err, admission.ErrLiveChange) {
		t.Fatalf("Apply = %v, want ErrLiveChange", err)
	}
	for _, want := range []string{"on_sale_at", "lanes", `unknown mode "sometimes"`, `"other" configured twice`, "needs an id"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if got := r.e.Events(); !slices.Equal(got, []string{"other", "show"}) {
		t.Fatalf("events after a refused Apply = %v", got)
	}
	if cfg, _ := r.e.Config("other"); cfg.Caps.MaxActive != 0 {
		t.Fatalf("a refused Apply changed other: %+v", cfg.Caps)
	}
	// The same config again is no change at all.
	res, err := r.e.Apply([]admission.EventConfig{event("show"), event("other")})
	if err != nil || len(res.Added)+len(res.Changed)+len(res.Removed) != 0 {
		t.Fatalf("re-applying the same configuration = %+v, %v", res, err)
	}
}

// TestApplyReschedulesBeforeOpening: an event whose queue has not opened
// may move; a zone change of the same instant is no change.
func TestApplyReschedulesBeforeOpening(t *testing.T) {
	r := newRig(t, event("show")) // opens at t0, the clock is before
	later := event("show")
	later.QueueOpensAt, later.OnSaleAt = t0.Add(time.Hour), t0.Add(2*time.Hour)
	later.Lanes = []admission.LaneConfig{{Name: "presale", Priority: true}}
	res, err := r.e.Apply([]admission.EventConfig{later})
	if err != nil || !slices.Equal(res.Changed, []string{"show"}) {
		t.Fatalf("Apply = %+v, %v", res, err)
	}
	r.at(t, time.Minute)
	if _, _, err := r.e.Join(ctx, "show", admission.JoinRequest{}); !errors.Is(err, admission.ErrNotOpen) {
		t.Fatalf("join before the new opening: %v", err)
	}
	if r.e.Gate("show") == nil {
		t.Fatal("the rebuilt event has no gate")
	}
	zoned := later
	zone := time.FixedZone("CET", 3600)
	zoned.QueueOpensAt, zoned.OnSaleAt = later.QueueOpensAt.In(zone), later.OnSaleAt.In(zone)
	if res, err := r.e.Apply([]admission.EventConfig{zoned}); err != nil || len(res.Changed) != 0 {
		t.Fatalf("the same times in another zone = %+v, %v", res, err)
	}
	r.at(t, time.Hour+time.Second)
	if _, _, err := r.e.Join(ctx, "show", admission.JoinRequest{}); err != nil {
		t.Fatalf("join after the new opening: %v", err)
	}
}

// TestApplyRemoveAndAddBack: an event removed and added again resumes its
// queue from the store: the same visitors at the same numbers.
func TestApplyRemoveAndAddBack(t *testing.T) {
	r := newRig(t, event("show"))
	tickets := selling(t, r, 20)
	if _, err := r.e.Apply(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.e.Status(ctx, "show", tickets[0]); !errors.Is(err, admission.ErrUnknownEvent) {
		t.Fatalf("status of a removed event: %v", err)
	}
	if err := r.e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.e.Apply([]admission.EventConfig{event("show")}); err != nil {
		t.Fatal(err)
	}
	r.at(t, 70*time.Second)
	for i := range tickets {
		want := tickets[i].Number
		r.status(t, "show", &tickets[i])
		if tickets[i].Number != want {
			t.Fatalf("visitor %d: number %d after re-adding, was %d", i, tickets[i].Number, want)
		}
	}
}

// TestApplyConcurrent applies changing event sets while statuses, joins
// and ticks run (run with -race): the kept event's visitors keep their
// numbers and never get an error.
func TestApplyConcurrent(t *testing.T) {
	r := newRig(t, event("show"))
	tickets := selling(t, r, 30)
	var wg sync.WaitGroup
	var stop atomic.Bool
	errc := make(chan error, 8)
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				for i := w; i < len(tickets); i += 3 {
					tk := tickets[i]
					res, err := r.e.Status(ctx, "show", tk)
					if err != nil || res.Ticket.Number != tk.Number {
						errc <- errors.Join(err, errors.New("status changed a number"))
						return
					}
				}
				r.e.Gate("show").MayPass()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if err := r.e.Tick(ctx); err != nil {
				errc <- err
				return
			}
			r.e.Figures("show")
		}
	}()
	for i := range 200 {
		show := event("show")
		show.Caps.MaxActive = 20 + i%3
		show.Controller.TargetP95 = time.Duration(500+i%2*100) * time.Millisecond
		set := []admission.EventConfig{show}
		if i%2 == 0 {
			set = append(set, event("extra"))
		}
		if _, err := r.e.Apply(set); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if _, _, err := r.e.Join(ctx, "extra", admission.JoinRequest{}); err != nil {
				t.Fatalf("join extra: %v", err)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}
