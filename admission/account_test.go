package admission_test

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// arrive joins and fails the test on an error.
func arrive(t *testing.T, e *admission.Engine, ev string, req admission.JoinRequest) admission.Arrival {
	t.Helper()
	a, err := e.Arrive(ctx, ev, req)
	if err != nil {
		t.Fatalf("Arrive(%+v): %v", req, err)
	}
	return a
}

// TestAccountOnePlace: an account's second join, from another device,
// gets its first place back, bound to the new device; the draw counts the
// account once and both devices see the same number.
func TestAccountOnePlace(t *testing.T) {
	r := newRig(t, event("show"))
	r.at(t, time.Second)
	first := arrive(t, r.e, "show", admission.JoinRequest{Binding: "phone", Account: "alice"})
	if first.Outcome != admission.OutcomeJoined || !first.Placed || !first.Issue {
		t.Fatalf("first join: %+v", first)
	}
	second := arrive(t, r.e, "show", admission.JoinRequest{Binding: "laptop", Account: "alice"})
	if second.Outcome != admission.OutcomeDeduplicated || !second.Placed || !second.Issue ||
		second.Ticket.Visitor != first.Ticket.Visitor || second.Ticket.Tranche != first.Ticket.Tranche ||
		second.Ticket.Lane != first.Ticket.Lane || second.Ticket.Binding != "laptop" ||
		!second.Ticket.ExpiresAt.Equal(first.Ticket.ExpiresAt.Truncate(time.Second)) {
		t.Fatalf("second device's join: %+v, first %+v", second.Ticket, first.Ticket)
	}
	// The second device presenting its ticket is a plain rejoin.
	again := arrive(t, r.e, "show", admission.JoinRequest{Binding: "laptop", Account: "alice", Existing: &second.Ticket})
	if again.Outcome != admission.OutcomeRejoined || again.Issue || again.Ticket.Visitor != first.Ticket.Visitor {
		t.Fatalf("rejoin with the account's ticket: %+v", again)
	}
	bob := arrive(t, r.e, "show", admission.JoinRequest{Binding: "phone", Account: "bob"})
	anon := arrive(t, r.e, "show", admission.JoinRequest{Binding: "phone"})
	if bob.Outcome != admission.OutcomeJoined || anon.Outcome != admission.OutcomeJoined ||
		bob.Ticket.Visitor == first.Ticket.Visitor || anon.Ticket.Visitor == first.Ticket.Visitor {
		t.Fatalf("other visitors: %+v %+v", bob, anon)
	}
	r.at(t, 62*time.Second)
	r.at(t, 63*time.Second)
	if f := r.e.Figures("show").Lanes[admission.PublicLane]; f.Drawn != 3 {
		t.Fatalf("drawn %d; want 3 (alice once, bob, the anonymous visitor)", f.Drawn)
	}
	a, b := first.Ticket, second.Ticket
	r.status(t, "show", &a)
	r.status(t, "show", &b)
	if a.Number == 0 || a.Number != b.Number {
		t.Fatalf("numbers of alice's two devices: %d, %d", a.Number, b.Number)
	}
}

// TestAccountLogsInWithAPlace: a visitor who joined before logging in
// makes that place the account's; a ticket of another place does not
// give an account a second one.
func TestAccountLogsInWithAPlace(t *testing.T) {
	r := newRig(t, event("show"))
	r.at(t, time.Second)
	anon := arrive(t, r.e, "show", admission.JoinRequest{Binding: "phone"})
	in := arrive(t, r.e, "show", admission.JoinRequest{Binding: "phone", Account: "carol", Existing: &anon.Ticket})
	if in.Outcome != admission.OutcomeRejoined || in.Ticket.Visitor != anon.Ticket.Visitor {
		t.Fatalf("logging in with a place: %+v", in)
	}
	other := arrive(t, r.e, "show", admission.JoinRequest{Binding: "laptop", Account: "carol"})
	if other.Outcome != admission.OutcomeDeduplicated || other.Ticket.Visitor != anon.Ticket.Visitor {
		t.Fatalf("the account on another device: %+v", other)
	}
	// A ticket of another place, then the account: the account's place.
	spare := arrive(t, r.e, "show", admission.JoinRequest{Binding: "tablet"})
	back := arrive(t, r.e, "show", admission.JoinRequest{Binding: "tablet", Account: "carol", Existing: &spare.Ticket})
	if back.Outcome != admission.OutcomeDeduplicated || back.Ticket.Visitor != anon.Ticket.Visitor || !back.Issue {
		t.Fatalf("another place's ticket with the account: %+v", back)
	}
}

// TestAccountKeepsShadowAndLane: an account placed in the shadow queue
// stays there whatever its later joins score; one placed in a presale
// lane keeps that place, and a code it brings later is not spent.
func TestAccountKeepsShadowAndLane(t *testing.T) {
	secret := []byte("invite-secret-0123456789abcdefghij")
	acctSecret := []byte("account-secret-0123456789abcdefgh")
	cfg := event("show")
	cfg.Lanes = []admission.LaneConfig{{Name: "presale", Priority: true, Access: admission.LaneAccess{
		InviteSecret: secret, AccountSecret: acctSecret}}}
	r := newRig(t)
	e, err := admission.New(admission.Options{Store: r.store, Clock: r.clk.Now, Meter: r.meter,
		Rand: rand.NewChaCha8([32]byte{9}), Replica: "test", ShadowKey: []byte("shadow-key-0123456789abcdefghijkl")}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.at(t, time.Second)
	bot := arrive(t, e, "show", admission.JoinRequest{Account: "bot", Shadow: true})
	back := arrive(t, e, "show", admission.JoinRequest{Account: "bot"})
	if back.Ticket.Visitor != bot.Ticket.Visitor || !e.Shadowed("show", back.Ticket.Visitor) {
		t.Fatalf("a shadowed account's second join: %+v, shadowed %v", back, e.Shadowed("show", back.Ticket.Visitor))
	}
	proof := admission.MakeAccountProof(acctSecret, "show", "dave")
	pre := arrive(t, e, "show", admission.JoinRequest{Lane: "presale", Account: "dave",
		Credential: admission.Credential{Account: "dave", AccountProof: proof}})
	pub := arrive(t, e, "show", admission.JoinRequest{Account: "dave"})
	if pre.Ticket.Lane != "presale" || pub.Ticket.Lane != "presale" || pub.Ticket.Visitor != pre.Ticket.Visitor {
		t.Fatalf("a presale account joining the public queue: %+v", pub.Ticket)
	}
	invite := admission.MakeInvite(secret, "show", "code-1", "")
	if a := arrive(t, e, "show", admission.JoinRequest{Account: "dave", Credential: admission.Credential{Invite: invite}}); a.Ticket.Visitor != pre.Ticket.Visitor {
		t.Fatalf("the account with an invite: %+v", a.Ticket)
	}
	if a := arrive(t, e, "show", admission.JoinRequest{Credential: admission.Credential{Invite: invite}}); a.Ticket.Lane != "presale" {
		t.Fatalf("the invite after the account brought it: %+v", a.Ticket)
	}
}

// TestReplicasOnePlacePerAccount: one account joining through two
// replicas at once, many times over, gets one place; the draw counts it
// once.
func TestReplicasOnePlacePerAccount(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	clk := fakeclock.New(t0.Add(-10 * time.Second))
	m := &meter{}
	m.m = admission.Measurements{LatencyP50: 20 * time.Millisecond, LatencyP95: 50 * time.Millisecond, RequestRate: 10}
	replicas := []*admission.Engine{
		redisReplica(t, srv, admission.Options{Clock: clk.Now, Meter: m, Rand: rand.NewChaCha8([32]byte{1}), Replica: "a"}, event("shared")),
		redisReplica(t, srv, admission.Options{Clock: clk.Now, Meter: m, Rand: rand.NewChaCha8([32]byte{2}), Replica: "b"}, event("shared")),
	}
	clk.Add(11 * time.Second)
	const n = 16
	got := make([]admission.Arrival, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			got[i], errs[i] = replicas[i%2].Arrive(ctx, "shared", admission.JoinRequest{Account: "erin", Binding: "device"})
		})
	}
	wg.Wait()
	joined := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if got[i].Outcome == admission.OutcomeJoined {
			joined++
		}
		if got[i].Ticket.Visitor != got[0].Ticket.Visitor {
			t.Fatalf("join %d got another place: %+v", i, got[i].Ticket)
		}
	}
	if joined != 1 {
		t.Fatalf("%d joins of one account were new places", joined)
	}
	for _, tm := range []time.Duration{62 * time.Second, 63 * time.Second} {
		clk.Add(t0.Add(tm).Sub(clk.Now()))
		for _, e := range replicas {
			if err := e.Tick(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, e := range replicas {
		if f := e.Figures("shared").Lanes[admission.PublicLane]; f.Drawn != 1 {
			t.Fatalf("drawn %d; want the account once", f.Drawn)
		}
	}
}
