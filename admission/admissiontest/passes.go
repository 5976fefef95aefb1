// Cases on what stops a pass or a visitor: revocations, visitor bars (and
// their expiry), and single-use invite codes.

package admissiontest

import (
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

func revocations(t *testing.T, s admission.Store, ev string) map[string]time.Time {
	t.Helper()
	r, err := s.Revocations(ctx, ev)
	check(t, err)
	return r
}

// near: stores keep revocation times to the millisecond.
func near(a, b time.Time) bool { return a.Sub(b).Abs() < time.Millisecond }

// testRevocations: Revoke bars a pass until a time; Revocations lists the
// bars in force, per event.
func testRevocations(t *testing.T, s admission.Store) {
	ev := NewEventID()
	hour := time.Now().Add(time.Hour)
	check(t, s.Revoke(ctx, ev, "pass-1", hour))
	check(t, s.Revoke(ctx, ev, "pass-2", hour.Add(time.Minute)))
	check(t, s.Revoke(ctx, ev, "pass-3", time.Now().Add(-time.Second))) // already over
	check(t, s.Revoke(ctx, NewEventID(), "pass-4", hour))
	r := revocations(t, s, ev)
	if len(r) != 2 || !near(r["pass-1"], hour) || !near(r["pass-2"], hour.Add(time.Minute)) {
		t.Fatalf("Revocations = %v", r)
	}
	// Revoking again for longer extends the bar.
	check(t, s.Revoke(ctx, ev, "pass-1", hour.Add(time.Hour)))
	if r := revocations(t, s, ev); !near(r["pass-1"], hour.Add(time.Hour)) {
		t.Fatalf("after extending: %v", r)
	}
}

// testRevocationsExpire: a bar whose time is over is no longer listed.
func testRevocationsExpire(t *testing.T, s admission.Store) {
	ev := NewEventID()
	check(t, s.Revoke(ctx, ev, "short", time.Now().Add(300*time.Millisecond)))
	check(t, s.Revoke(ctx, ev, "long", time.Now().Add(time.Hour)))
	time.Sleep(600 * time.Millisecond)
	r := revocations(t, s, ev)
	if _, ok := r["short"]; ok || len(r) != 1 {
		t.Fatalf("Revocations after the short bar ran out = %v", r)
	}
}

// bars returns an event's visitor bars by visitor, checking there is one
// per visitor.
func bars(t *testing.T, s admission.Store, ev string) map[admission.VisitorID]admission.VisitorBar {
	t.Helper()
	list, err := s.VisitorBars(ctx, ev)
	check(t, err)
	out := map[admission.VisitorID]admission.VisitorBar{}
	for _, b := range list {
		if _, dup := out[b.Visitor]; dup {
			t.Fatalf("VisitorBars lists %s twice", b.Visitor)
		}
		out[b.Visitor] = b
	}
	return out
}

func wantBar(t *testing.T, got admission.VisitorBar, from, until time.Time, reason admission.BarReason) {
	t.Helper()
	if !near(got.From, from) || !near(got.Until, until) || got.Reason != reason {
		t.Fatalf("bar = from %v until %v %s, want from %v until %v %s", got.From, got.Until, got.Reason, from, until, reason)
	}
}

// testVisitorBars: bars round-trip per event, merge per visitor (earlier
// from, later until, revoked over completed), and a bar already over is
// not recorded.
func testVisitorBars(t *testing.T, s admission.Store) {
	ev := NewEventID()
	v := ids(4)
	now := time.Now()
	hour := now.Add(time.Hour)
	check(t, s.BarVisitors(ctx, ev, []admission.VisitorBar{
		{Visitor: v[0], From: now, Until: hour, Reason: admission.BarRevoked},
		{Visitor: v[1], From: now.Add(30 * time.Second), Until: hour, Reason: admission.BarCompleted},
		{Visitor: v[2], From: now, Until: now.Add(-time.Second), Reason: admission.BarRevoked}, // already over
	}))
	check(t, s.BarVisitors(ctx, NewEventID(), []admission.VisitorBar{{Visitor: v[3], From: now, Until: hour, Reason: admission.BarRevoked}}))
	check(t, s.BarVisitors(ctx, ev, nil))
	b := bars(t, s, ev)
	if len(b) != 2 {
		t.Fatalf("VisitorBars = %v, want 2 bars", b)
	}
	wantBar(t, b[v[0]], now, hour, admission.BarRevoked)
	wantBar(t, b[v[1]], now.Add(30*time.Second), hour, admission.BarCompleted)

	// Barring again merges: a revocation of a completed visitor starts at
	// once and says revoked; a later completion of a revoked one changes
	// nothing but a later until.
	check(t, s.BarVisitors(ctx, ev, []admission.VisitorBar{
		{Visitor: v[1], From: now.Add(time.Second), Until: now.Add(time.Minute), Reason: admission.BarRevoked},
		{Visitor: v[0], From: now.Add(time.Minute), Until: hour.Add(time.Hour), Reason: admission.BarCompleted},
	}))
	b = bars(t, s, ev)
	wantBar(t, b[v[0]], now, hour.Add(time.Hour), admission.BarRevoked)
	wantBar(t, b[v[1]], now.Add(time.Second), hour, admission.BarRevoked)

	if err := s.BarVisitors(ctx, ev, []admission.VisitorBar{{Visitor: v[2], From: now, Until: hour, Reason: "because"}}); err == nil {
		t.Fatal("BarVisitors took an unknown reason")
	}
}

// testVisitorBarsExpire: a bar whose until is over is no longer listed.
func testVisitorBarsExpire(t *testing.T, s admission.Store) {
	ev := NewEventID()
	v := ids(2)
	now := time.Now()
	check(t, s.BarVisitors(ctx, ev, []admission.VisitorBar{
		{Visitor: v[0], From: now, Until: now.Add(300 * time.Millisecond), Reason: admission.BarCompleted},
		{Visitor: v[1], From: now, Until: now.Add(time.Hour), Reason: admission.BarRevoked},
	}))
	time.Sleep(600 * time.Millisecond)
	b := bars(t, s, ev)
	if _, ok := b[v[0]]; ok || len(b) != 1 {
		t.Fatalf("VisitorBars after the short bar ran out = %v", b)
	}
}

// testInvites: an invite's first use says so, later ones don't, per code
// and event.
func testInvites(t *testing.T, s admission.Store) {
	ev := NewEventID()
	forget := time.Now().Add(time.Hour)
	if !useInvite(t, s, ev, "code-1", forget) {
		t.Fatal("first use of code-1 is not first")
	}
	for range 2 {
		if useInvite(t, s, ev, "code-1", forget) {
			t.Fatal("second use of code-1 is first")
		}
	}
	if !useInvite(t, s, ev, "code-2", forget) {
		t.Fatal("code-2's first use is not first")
	}
	if !useInvite(t, s, NewEventID(), "code-1", forget) {
		t.Fatal("code-1 in another event is not first")
	}
	// A short memory still lasts until forget.
	if !useInvite(t, s, ev, "code-3", time.Now().Add(time.Hour+time.Minute)) || useInvite(t, s, ev, "code-3", forget) {
		t.Fatal("code-3 is not single use")
	}
}

// testInvitesConcurrent: of many concurrent uses of one code, exactly one
// is first.
func testInvitesConcurrent(t *testing.T, s admission.Store) {
	ev := NewEventID()
	const n = 20
	firsts := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { firsts[i], errs[i] = s.UseInvite(ctx, ev, "shared", time.Now().Add(time.Hour)) })
	}
	wg.Wait()
	count := 0
	for i := range n {
		check(t, errs[i])
		if firsts[i] {
			count++
		}
	}
	if count != 1 {
		t.Fatalf("%d of %d concurrent uses were first", count, n)
	}
}

func useInvite(t *testing.T, s admission.Store, ev, code string, forget time.Time) bool {
	t.Helper()
	first, err := s.UseInvite(ctx, ev, code, forget)
	check(t, err)
	return first
}
