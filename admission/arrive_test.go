package admission_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// checkNoPlace checks the answer to a join that gives no place.
func checkNoPlace(t *testing.T, a admission.Arrival, outcome admission.JoinOutcome, kind admission.StatusKind, reason string, refresh time.Duration) {
	t.Helper()
	st := a.Status
	if a.Outcome != outcome || a.Placed || a.Issue || a.Pass != nil || a.Ticket != (admission.Ticket{}) {
		t.Fatalf("arrival = %+v, want %s without a place", a, outcome)
	}
	if st.Event != "show" || st.Kind != kind || st.Reason != reason || st.Position != -1 ||
		st.ETA != (admission.ETA{Seconds: -1, Low: -1, High: -1}) || !st.OnSaleAt.Equal(t0.Add(time.Minute)) || st.Refresh != refresh {
		t.Fatalf("status = %+v, want %s (%q) refreshing in %v", st, kind, reason, refresh)
	}
}

// TestArriveWithoutPlace: before the queue opens, once closed and once
// sold out, a join gets a status and no place; Join says the same with
// its errors.
func TestArriveWithoutPlace(t *testing.T) {
	cfg := event("show")
	cfg.ClosesAt = t0.Add(time.Hour)
	r := newRig(t, cfg)
	// The rig starts 10 s before the queue opens.
	a, err := r.e.Arrive(ctx, "show", admission.JoinRequest{})
	if err != nil {
		t.Fatal(err)
	}
	checkNoPlace(t, a, admission.OutcomeScheduled, admission.StatusScheduled, "", admission.DefaultRefresh)
	r.clk.Add(8 * time.Second) // 2 s before it opens: poll again then
	a, _ = r.e.Arrive(ctx, "show", admission.JoinRequest{})
	checkNoPlace(t, a, admission.OutcomeScheduled, admission.StatusScheduled, "", 2*time.Second)
	r.clk.Add(1900 * time.Millisecond) // never sooner than a second
	a, _ = r.e.Arrive(ctx, "show", admission.JoinRequest{})
	checkNoPlace(t, a, admission.OutcomeScheduled, admission.StatusScheduled, "", time.Second)

	r.at(t, time.Second)
	if err := r.e.SetControl(ctx, "show", admission.Control{SoldOut: true}); err != nil {
		t.Fatal(err)
	}
	a, _ = r.e.Arrive(ctx, "show", admission.JoinRequest{})
	checkNoPlace(t, a, admission.OutcomeSoldOut, admission.StatusSoldOut, "", time.Minute)
	if _, _, err := r.e.Join(ctx, "show", admission.JoinRequest{}); !errors.Is(err, admission.ErrSoldOut) {
		t.Fatalf("Join when sold out: %v", err)
	}

	r.at(t, 2*time.Hour)
	a, _ = r.e.Arrive(ctx, "show", admission.JoinRequest{})
	checkNoPlace(t, a, admission.OutcomeClosed, admission.StatusClosed, "closed", time.Minute)
	if _, _, err := r.e.Join(ctx, "show", admission.JoinRequest{}); !errors.Is(err, admission.ErrClosed) {
		t.Fatalf("Join when closed: %v", err)
	}

	if _, err := r.e.Arrive(ctx, "nope", admission.JoinRequest{}); !errors.Is(err, admission.ErrUnknownEvent) {
		t.Fatalf("unknown event: %v", err)
	}
}

// TestArriveJoinsAndRejoins: a new visitor gets a place and a ticket to
// set; one who presents their ticket keeps their place, is told to reissue
// it only when it changed, and gets their pass when their turn has come.
func TestArriveJoinsAndRejoins(t *testing.T) {
	r := newRig(t, event("show"))
	r.at(t, time.Second)
	a, err := r.e.Arrive(ctx, "show", admission.JoinRequest{Binding: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Outcome != admission.OutcomeJoined || !a.Placed || !a.Issue || a.Pass != nil ||
		a.Ticket.Event != "show" || a.Ticket.Binding != "b" || a.Status.Kind != admission.StatusPrequeue {
		t.Fatalf("a new join: %+v", a)
	}
	if _, err := r.e.Arrive(ctx, "show", admission.JoinRequest{Lane: "vip"}); !errors.Is(err, admission.ErrUnknownLane) {
		t.Fatalf("an unknown lane: %v", err)
	}
	tk := a.Ticket

	// Again with the same ticket: the same place, nothing to reissue.
	again, err := r.e.Arrive(ctx, "show", admission.JoinRequest{Existing: &tk})
	if err != nil {
		t.Fatal(err)
	}
	if again.Outcome != admission.OutcomeRejoined || !again.Placed || again.Issue || again.Ticket != tk {
		t.Fatalf("a rejoin before the draw: %+v", again)
	}

	// After the draw the ticket gets its number: reissue it.
	r.at(t, 61*time.Second)
	r.at(t, 62*time.Second)
	again, err = r.e.Arrive(ctx, "show", admission.JoinRequest{Existing: &tk})
	if err != nil {
		t.Fatal(err)
	}
	if again.Outcome != admission.OutcomeRejoined || !again.Issue || again.Ticket.Number == 0 || again.Ticket.Visitor != tk.Visitor {
		t.Fatalf("a rejoin after the draw: %+v", again)
	}
	tk = again.Ticket

	// Once their turn comes, a rejoin hands the pass with the status.
	for s := 63; s < 200; s++ {
		r.at(t, time.Duration(s)*time.Second)
		again, err = r.e.Arrive(ctx, "show", admission.JoinRequest{Existing: &tk})
		if err != nil {
			t.Fatal(err)
		}
		if again.Status.Kind == admission.StatusAdmitted {
			break
		}
	}
	if again.Status.Kind != admission.StatusAdmitted || again.Pass == nil || again.Pass.Visitor != tk.Visitor ||
		again.Pass.Binding != "b" || again.Issue || again.Outcome != admission.OutcomeRejoined {
		t.Fatalf("a rejoin whose turn has come: %+v", again)
	}
}

// TestArriveShadow: a join the bot defence shadows is shadowed, with an
// answer shaped like anyone's; without a shadow key it is refused.
func TestArriveShadow(t *testing.T) {
	r := newRig(t, event("show"))
	r.at(t, time.Second)
	if _, err := r.e.Arrive(ctx, "show", admission.JoinRequest{Shadow: true}); err == nil {
		t.Fatal("a shadow join without a shadow key was taken")
	}
	e, err := admission.New(admission.Options{Store: r.store, Clock: r.clk.Now, Meter: r.meter,
		Rand: rand.NewChaCha8([32]byte{3}), Replica: "test", ShadowKey: bytes.Repeat([]byte("k"), 32)}, event("show"))
	if err != nil {
		t.Fatal(err)
	}
	real, err := e.Arrive(ctx, "show", admission.JoinRequest{})
	if err != nil {
		t.Fatal(err)
	}
	shadow, err := e.Arrive(ctx, "show", admission.JoinRequest{Shadow: true})
	if err != nil {
		t.Fatal(err)
	}
	if real.Outcome != admission.OutcomeJoined || shadow.Outcome != admission.OutcomeShadowed {
		t.Fatalf("outcomes %s, %s", real.Outcome, shadow.Outcome)
	}
	if !e.Shadowed("show", shadow.Ticket.Visitor) || e.Shadowed("show", real.Ticket.Visitor) {
		t.Fatal("the shadow mark is on the wrong visitor")
	}
	// Apart from the visitor, what the two are handed is the same.
	real.Outcome, shadow.Outcome = "", ""
	real.Ticket.Visitor, shadow.Ticket.Visitor = admission.VisitorID{}, admission.VisitorID{}
	if real != shadow {
		t.Fatalf("a shadowed join differs: %+v vs %+v", shadow, real)
	}
}
