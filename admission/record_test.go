package admission_test

import (
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// minutes reads back an event's minute records.
func minutes(t *testing.T, s admission.Store, ev string) []admission.Minute {
	t.Helper()
	recs, err := s.Minutes(ctx, ev, t0.Add(-time.Hour), t0.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]admission.Minute, len(recs))
	for i, r := range recs {
		if err := out[i].UnmarshalBinary(r.Record); err != nil {
			t.Fatal(err)
		}
		if !out[i].At.Equal(r.Minute) {
			t.Fatalf("record of minute %v says %v", r.Minute, out[i].At)
		}
	}
	return out
}

// TestMinuteRecords runs a sale in simulated time (40 joins in the
// pre-queue, 10 of whom never come back, a seat sold per visitor
// admitted, bot-defence actions noted) and checks the leader's minute
// records: one per minute, in order, whose counts add up to what
// happened, each in the minute it happened in.
func TestMinuteRecords(t *testing.T) {
	cfg := event("show")
	cfg.NoShowGrace = 30 * time.Second
	cfg.InventoryEvent = "show-inv"
	inv := &inventory{left: 100}
	r := newRig(t)
	s := r.store
	e, err := admission.New(admission.Options{Store: s, Clock: r.clk.Now, Meter: r.meter, Inventory: inv, Replica: "test"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	r.at(t, time.Second)
	var tickets []admission.Ticket
	for range 40 {
		tickets = append(tickets, r.join(t, "show", admission.JoinRequest{}))
	}
	for sec := 2; sec < 62; sec++ { // the pre-queue, a tick a second
		r.at(t, time.Duration(sec)*time.Second)
	}
	for i, n := range []int{40, 3, 2, 1, 1} {
		for range n {
			e.NoteDefence("show", admission.DefenceBands[i])
		}
	}
	e.NoteDefence("show", "no such band")
	e.NoteDefence("no such event", "block")
	promised := 0
	for _, tk := range tickets {
		if !tk.PromisedBy.IsZero() {
			promised++
		}
	}
	present := tickets[:30] // the other 10 never come back after joining
	came := map[uint64]bool{}
	kept := 0
	for sec := 62; sec < 400; sec++ {
		r.at(t, time.Duration(sec)*time.Second)
		for i := range present {
			if came[present[i].Number] && present[i].Number != 0 {
				continue
			}
			if res := r.status(t, "show", &present[i]); res.Status.Kind == admission.StatusAdmitted {
				e.NoteUse("show", res.Pass) // the visitor's first request at the gate
				came[present[i].Number] = true
				inv.mu.Lock()
				inv.left--
				inv.mu.Unlock()
				if p := present[i].PromisedBy; !p.IsZero() && !r.clk.Now().After(p) {
					kept++
				}
			}
		}
	}
	if len(came) != 30 {
		t.Fatalf("%d of 30 present visitors admitted", len(came))
	}
	if err := e.FlushMinutes(ctx); err != nil {
		t.Fatal(err)
	}
	got := minutes(t, s, "show")
	var sum admission.Minute
	for i, m := range got {
		if i > 0 && !m.At.Equal(got[i-1].At.Add(time.Minute)) {
			t.Fatalf("minute %v follows %v", m.At, got[i-1].At)
		}
		sum.Arrivals += m.Arrivals
		sum.Admitted += m.Admitted
		sum.SeatsSold += m.SeatsSold
		sum.NoShows += m.NoShows
		sum.Reached += m.Reached
		sum.ETAKept += m.ETAKept
		sum.ETALate += m.ETALate
		sum.Defence.Add(m.Defence)
		sum.Ticks += m.Ticks
	}
	t.Logf("%d minutes; totals %+v; promised %d, kept %d", len(got), sum, promised, kept)
	if len(got) != 7 || !got[0].At.Equal(t0) {
		t.Fatalf("minutes from %v, %d of them; want 7 from %v (10:00 to 10:06)", got[0].At, len(got), t0)
	}
	if got[0].Arrivals != 40 || sum.Arrivals != 40 {
		t.Fatalf("arrivals %d in the first minute, %d in all; want 40 and 40", got[0].Arrivals, sum.Arrivals)
	}
	if sum.Admitted != 30 || got[0].Admitted != 0 {
		t.Fatalf("admitted %d (%d in the pre-queue minute), want 30 (0)", sum.Admitted, got[0].Admitted)
	}
	if sum.SeatsSold != 30 || got[len(got)-1].SeatsLeft != 70 {
		t.Fatalf("seats sold %d, left %d at the end; want 30 and 70", sum.SeatsSold, got[len(got)-1].SeatsLeft)
	}
	if sum.NoShows != 10 || sum.Reached != 40 {
		t.Fatalf("no-shows %d of %d reached, want the 10 who never came back of 40", sum.NoShows, sum.Reached)
	}
	if want := (admission.DefenceCounts{LightPoW: 40, HeavyPoW: 3, Captcha: 2, Shadow: 1, Block: 1}); sum.Defence != want {
		t.Fatalf("defence %+v, want %+v", sum.Defence, want)
	}
	if promised != 40 || sum.ETAKept+sum.ETALate != 30 || int(sum.ETAKept) != kept {
		t.Fatalf("ETA: %d promised at the join, %d kept + %d late recorded (the visitors saw %d kept); want 40, 30 in all", promised, sum.ETAKept, sum.ETALate, kept)
	}
	if sum.Ticks != 399 { // a tick a second from 10:00:01 to 10:06:39
		t.Fatalf("%d ticks recorded", sum.Ticks)
	}
	if got[2].Target == 0 || got[2].Reason == "" || got[2].OriginRequests <= 0 || got[2].LatencyP50Ms != 20 {
		t.Fatalf("selling minute without the controller's target or the origin's figures: %+v", got[2])
	}
}

// TestMinuteRecordsETALate: when admission stops for longer than the
// ETAs promised at the join (the event is paused after the draw), the
// visitors admitted after their promise count as late, those before it
// as kept, and the record's counts are what the visitors saw.
func TestMinuteRecordsETALate(t *testing.T) {
	r := newRig(t, event("show"))
	r.at(t, time.Second)
	var tickets []admission.Ticket
	for range 30 {
		tickets = append(tickets, r.join(t, "show", admission.JoinRequest{}))
	}
	latest := time.Time{}
	for _, tk := range tickets {
		if tk.PromisedBy.IsZero() {
			t.Fatal("a join in the pre-queue promised nothing")
		}
		if tk.PromisedBy.After(latest) {
			latest = tk.PromisedBy
		}
	}
	pause := func(p bool) {
		t.Helper()
		if _, err := r.e.UpdateControl(ctx, "show", func(c *admission.Control) { c.Paused = p }); err != nil {
			t.Fatal(err)
		}
	}
	kept, late, came := 0, 0, map[int]bool{}
	resumed := false
	for sec := 2; sec < 4000 && len(came) < len(tickets); sec++ {
		r.at(t, time.Duration(sec)*time.Second)
		switch now := r.clk.Now(); {
		case sec == 63:
			pause(true) // after a first admission at the draw
		case !resumed && now.After(latest):
			pause(false)
			resumed = true
		}
		if sec < 62 {
			continue
		}
		for i := range tickets {
			if came[i] {
				continue
			}
			if res := r.status(t, "show", &tickets[i]); res.Status.Kind == admission.StatusAdmitted {
				came[i] = true
				r.e.NoteUse("show", res.Pass)
				if r.clk.Now().After(tickets[i].PromisedBy) {
					late++
				} else {
					kept++
				}
			}
		}
	}
	if len(came) != len(tickets) || late == 0 {
		t.Fatalf("%d of %d admitted, %d late: the pause did not outlast the promises", len(came), len(tickets), late)
	}
	r.at(t, r.clk.Now().Add(time.Second).Sub(t0)) // the tick that counts the last admissions
	if err := r.e.FlushMinutes(ctx); err != nil {
		t.Fatal(err)
	}
	var k, l uint64
	for _, m := range minutes(t, r.store, "show") {
		k, l = k+m.ETAKept, l+m.ETALate
	}
	if int(k) != kept || int(l) != late {
		t.Fatalf("recorded %d kept and %d late; the visitors saw %d and %d", k, l, kept, late)
	}
}
