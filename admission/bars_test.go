package admission_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// admitOne runs the rig until one of tickets is admitted and returns its
// index and pass.
func admitOne(t *testing.T, r *rig, ev string, tickets []admission.Ticket, from time.Duration) (int, *admission.Pass, time.Duration) {
	t.Helper()
	for d := from; d < from+5*time.Minute; d += time.Second {
		r.at(t, d)
		for i := range tickets {
			if res := r.status(t, ev, &tickets[i]); res.Pass != nil {
				return i, res.Pass, d
			}
		}
	}
	t.Fatal("nobody was admitted")
	return 0, nil, 0
}

// replica is a second engine over the rig's store, as another process
// sharing a Redis would be.
func replica(t *testing.T, r *rig, cfgs ...admission.EventConfig) *admission.Engine {
	t.Helper()
	e, err := admission.New(admission.Options{Store: r.store, Clock: r.clk.Now,
		Rand: rand.NewChaCha8([32]byte{42}), Replica: "other"}, cfgs...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestRevokeVisitorSticks(t *testing.T) {
	cfg := event("show")
	r := newRig(t, cfg)
	r.at(t, time.Second)
	tickets := make([]admission.Ticket, 5)
	for i := range tickets {
		tickets[i] = r.join(t, "show", admission.JoinRequest{Binding: "b"})
	}
	other := replica(t, r, cfg)
	i, pass, at := admitOne(t, r, "show", tickets, 62*time.Second)
	if err := other.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	v := tickets[i].Visitor
	if id, ok := admission.PassVisitor(pass.ID); !ok || id != v {
		t.Fatalf("pass id %q does not name its visitor", pass.ID)
	}
	if r.e.PassRevoked("show", pass) || other.PassRevoked("show", pass) {
		t.Fatal("a pass is revoked before anyone revoked it")
	}

	b, err := r.e.RevokeVisitor(ctx, "show", v)
	if err != nil || b.Reason != admission.BarRevoked || !b.From.Equal(r.clk.Now()) {
		t.Fatalf("RevokeVisitor = %+v, %v", b, err)
	}
	// This replica stops the pass and mints no new one at once.
	if !r.e.PassRevoked("show", pass) {
		t.Fatal("the revoking replica still admits the pass")
	}
	res := r.status(t, "show", &tickets[i])
	if res.Pass != nil || res.Status.Kind != admission.StatusClosed || res.Status.Reason != "revoked" {
		t.Fatalf("status after revocation = %+v, pass %v", res.Status, res.Pass)
	}
	// The other replica follows at its next tick.
	if err := other.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if !other.PassRevoked("show", pass) {
		t.Fatal("another replica admits a revoked visitor's pass after a tick")
	}
	if res, err := other.Status(ctx, "show", tickets[i]); err != nil || res.Pass != nil || res.Status.Reason != "revoked" {
		t.Fatalf("another replica's status after revocation = %+v, %v", res.Status, err)
	}
	// The others carry on.
	for j := range tickets {
		if j == i {
			continue
		}
		if res := r.status(t, "show", &tickets[j]); res.Status.Kind == admission.StatusClosed {
			t.Fatalf("visitor %d closed by another's revocation", j)
		}
	}
	// And the bar survives a restart.
	r.store.Close()
	r.open(t, cfg)
	r.at(t, at+time.Second)
	if res := r.status(t, "show", &tickets[i]); res.Pass != nil || res.Status.Reason != "revoked" {
		t.Fatalf("status after a restart = %+v", res.Status)
	}
	if !r.e.PassRevoked("show", pass) {
		t.Fatal("a revoked pass admits after a restart")
	}
}

func TestCompleteEndsTheVisit(t *testing.T) {
	cfg := event("show")
	cfg.CompleteGrace = 20 * time.Second
	r := newRig(t, cfg)
	r.at(t, time.Second)
	tickets := make([]admission.Ticket, 3)
	for i := range tickets {
		tickets[i] = r.join(t, "show", admission.JoinRequest{})
	}
	other := replica(t, r, cfg)
	i, pass, _ := admitOne(t, r, "show", tickets, 62*time.Second)
	r.e.Complete("show", tickets[i].Visitor)
	res := r.status(t, "show", &tickets[i])
	if res.Pass != nil || res.Status.Kind != admission.StatusClosed || res.Status.Reason != "completed" {
		t.Fatalf("status after completion = %+v, pass %v", res.Status, res.Pass)
	}
	if r.e.PassRevoked("show", pass) {
		t.Fatal("the pass stopped before the grace was over")
	}
	r.clk.Add(time.Second)
	if err := r.e.Tick(ctx); err != nil { // writes the completion to the store
		t.Fatal(err)
	}
	if err := other.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if res, err := other.Status(ctx, "show", tickets[i]); err != nil || res.Pass != nil || res.Status.Reason != "completed" {
		t.Fatalf("another replica's status after completion = %+v, %v", res.Status, err)
	}
	if other.PassRevoked("show", pass) {
		t.Fatal("another replica stopped the pass before the grace was over")
	}
	r.clk.Add(19 * time.Second)
	if !r.e.PassRevoked("show", pass) || !other.PassRevoked("show", pass) {
		t.Fatal("the pass still admits after the grace")
	}
}

func TestKnown(t *testing.T) {
	r := newRig(t, event("show"))
	r.at(t, time.Second)
	pre := r.join(t, "show", admission.JoinRequest{})
	for _, v := range []admission.VisitorID{pre.Visitor} {
		if ok, err := r.e.Known(ctx, "show", v); err != nil || !ok {
			t.Fatalf("Known(undrawn member) = %v, %v", ok, err)
		}
	}
	r.at(t, 62*time.Second)
	r.at(t, 63*time.Second)
	late := r.join(t, "show", admission.JoinRequest{})
	for _, v := range []admission.VisitorID{pre.Visitor, late.Visitor} {
		if ok, err := r.e.Known(ctx, "show", v); err != nil || !ok {
			t.Fatalf("Known(%s) = %v, %v", v, ok, err)
		}
	}
	if ok, err := r.e.Known(ctx, "show", admission.NewVisitorID()); err != nil || ok {
		t.Fatalf("Known(stranger) = %v, %v", ok, err)
	}
	if _, err := r.e.Known(ctx, "nope", pre.Visitor); err == nil {
		t.Fatal("Known of an unknown event succeeded")
	}
}

func TestPassVisitor(t *testing.T) {
	v := admission.NewVisitorID()
	id := admission.NewPassIDFor(v)
	if got, ok := admission.PassVisitor(id); !ok || got != v || len(id) > 64 {
		t.Fatalf("PassVisitor(%q) = %s, %v", id, got, ok)
	}
	for _, bad := range []string{"", admission.NewPassID(), v.String(), "X" + id[1:], id + "A",
		"ABCDEF0123456789ABCDEF0123456789" + id[32:]} {
		if _, ok := admission.PassVisitor(bad); ok {
			t.Fatalf("PassVisitor(%q) succeeded", bad)
		}
	}
}

// FuzzPassVisitor: a pass id resolves to a visitor only when it starts
// with that visitor's id in lower-case hex and has NewPassIDFor's length.
func FuzzPassVisitor(f *testing.F) {
	f.Add(admission.NewPassIDFor(admission.NewVisitorID()))
	f.Add(admission.NewPassID())
	f.Add("")
	f.Add("0123456789ABCDEF0123456789abcdef0123456789012345678901")
	f.Fuzz(func(t *testing.T, id string) {
		v, ok := admission.PassVisitor(id)
		if !ok {
			return
		}
		if len(id) != 54 || id[:32] != v.String() {
			t.Fatalf("PassVisitor(%q) = %s", id, v)
		}
	})
}

// TestPassRevokedAllocatesNothing: the gate's check reads memory only.
func TestPassRevokedAllocatesNothing(t *testing.T) {
	r := newRig(t, event("show"))
	r.at(t, time.Second)
	barred := r.join(t, "show", admission.JoinRequest{})
	if _, err := r.e.RevokeVisitor(ctx, "show", barred.Visitor); err != nil {
		t.Fatal(err)
	}
	r.e.Complete("show", admission.NewVisitorID()) // a completion waiting for the tick
	in := &admission.Pass{ID: admission.NewPassID(), Visitor: admission.NewVisitorID()}
	out := &admission.Pass{ID: admission.NewPassID(), Visitor: barred.Visitor}
	allocs := testing.AllocsPerRun(1000, func() {
		if r.e.PassRevoked("show", in) || !r.e.PassRevoked("show", out) {
			t.Fatal("wrong answer")
		}
	})
	if allocs != 0 {
		t.Fatalf("PassRevoked allocates %.1f times", allocs)
	}
}
