// Cases on the operator's control, the controller's saved state and the
// lease (one holder at a time, or always granted for an embedded store).

package admissiontest

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// testControl: an operator's overrides round-trip, per event.
func testControl(t *testing.T, s admission.Store) {
	ev := NewEventID()
	for _, c := range []admission.Control{
		{Paused: true},
		{Closed: true, SoldOut: true, Caps: &admission.Caps{MaxActive: 500, MaxNewPerMinute: 60}},
		{Caps: &admission.Caps{}},
		{Maintenance: true, Mode: admission.ModeThreshold},
		{Passthrough: true, Paused: true, Mode: admission.ModeAlways},
		{Notice: &admission.Notice{Text: "Doors open at 10:00.\nBring ID."}},
		{Paused: true, Notice: &admission.Notice{Text: "Back soon", Texts: map[string]string{"de": "Gleich zurück", "pt-BR": "Já voltamos"}}},
		{},
	} {
		check(t, s.SetControl(ctx, ev, c))
		got, err := s.Control(ctx, ev)
		check(t, err)
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("Control = %+v (caps %+v), want %+v (caps %+v)", got, got.Caps, c, c.Caps)
		}
	}
	caps := &admission.Caps{MaxActive: 1}
	check(t, s.SetControl(ctx, ev, admission.Control{Caps: caps}))
	caps.MaxActive = 2 // the store keeps its own copy
	if got, _ := s.Control(ctx, ev); got.Caps == nil || got.Caps.MaxActive != 1 {
		t.Fatalf("Control after changing the caller's caps = %+v", got.Caps)
	}
	n := &admission.Notice{Text: "a", Texts: map[string]string{"de": "b"}}
	check(t, s.SetControl(ctx, ev, admission.Control{Notice: n}))
	n.Texts["de"] = "changed" // nor of the caller's notice
	if got, _ := s.Control(ctx, ev); got.Notice == nil || got.Notice.Texts["de"] != "b" {
		t.Fatalf("Control after changing the caller's notice = %+v", got.Notice)
	}
	got, _ := s.Control(ctx, ev)
	got.Notice.Texts["de"] = "changed" // nor of a reader's
	if again, _ := s.Control(ctx, ev); again.Notice.Texts["de"] != "b" {
		t.Fatalf("Control after changing a returned notice = %+v", again.Notice)
	}
	if got, _ := s.Control(ctx, NewEventID()); !reflect.DeepEqual(got, admission.Control{}) {
		t.Fatalf("another event's Control = %+v", got)
	}
}

// testController: the controller's state round-trips, per event.
func testController(t *testing.T, s admission.Store) {
	ev := NewEventID()
	state := []byte(`{"limit":120,"last_decrease":"2030-01-01T00:00:00Z"}` + "\x00\xff binary too")
	check(t, s.SaveController(ctx, ev, state))
	got, err := s.LoadController(ctx, ev)
	check(t, err)
	if !bytes.Equal(got, state) {
		t.Fatalf("LoadController = %q", got)
	}
	state[0], got[1] = 'x', 'x' // neither is the stored state
	got, _ = s.LoadController(ctx, ev)
	if got[0] != '{' || got[1] != '"' {
		t.Fatalf("stored state changed through a caller's slice: %q", got)
	}
	check(t, s.SaveController(ctx, ev, []byte("v2")))
	if got, _ := s.LoadController(ctx, ev); string(got) != "v2" {
		t.Fatalf("LoadController after a second save = %q", got)
	}
	if got, _ := s.LoadController(ctx, NewEventID()); got != nil {
		t.Fatalf("another event's controller state = %q", got)
	}
}

// testLeaseAlways: an embedded store's one process always leads.
func testLeaseAlways(t *testing.T, s admission.Store) {
	ev := NewEventID()
	for _, holder := range []string{"a", "b", "a", "c"} {
		if !lease(t, s, ev, holder, time.Second) {
			t.Fatalf("Lease(%s) = false on a store that always leads", holder)
		}
	}
}

// testLeaseShared: one holder at a time, renewals keep the lease, and
// another holder takes over once the holder stops renewing. Only lower
// bounds of time are asserted: a lease held is only checked well within
// a long ttl, a takeover only after sleeping past the ttl.
func testLeaseShared(t *testing.T, s admission.Store) {
	const long, short = time.Minute, 300 * time.Millisecond
	ev, ev2 := NewEventID(), NewEventID()
	if !lease(t, s, ev, "a", long) {
		t.Fatal("a cannot take a free lease")
	}
	if !lease(t, s, ev, "a", long) {
		t.Fatal("a cannot renew its lease")
	}
	if lease(t, s, ev, "b", long) {
		t.Fatal("b leads while a holds the lease")
	}
	if !lease(t, s, ev2, "b", long) {
		t.Fatal("b cannot lead another event")
	}

	// A renewal extends the lease: a short lease renewed for long holds
	// past the short ttl.
	ev3 := NewEventID()
	if !lease(t, s, ev3, "a", short) || !lease(t, s, ev3, "a", long) {
		t.Fatal("a cannot take and renew ev3")
	}
	time.Sleep(2 * short)
	if lease(t, s, ev3, "b", long) {
		t.Fatal("b took over a renewed lease")
	}

	// A holder that stops renewing loses the lease after its ttl.
	ev4 := NewEventID()
	if !lease(t, s, ev4, "a", short) {
		t.Fatal("a cannot take ev4")
	}
	time.Sleep(2 * short)
	if !lease(t, s, ev4, "b", long) {
		t.Fatal("b did not take over after a's lease ran out")
	}
	if lease(t, s, ev4, "a", long) {
		t.Fatal("a leads again while b holds the lease")
	}

	// A holder whose lease ran out can take it again when nobody else did.
	ev5 := NewEventID()
	if !lease(t, s, ev5, "a", short) {
		t.Fatal("a cannot take ev5")
	}
	time.Sleep(2 * short)
	if !lease(t, s, ev5, "a", long) {
		t.Fatal("a cannot take back its own expired lease")
	}
}

func lease(t *testing.T, s admission.Store, ev, holder string, ttl time.Duration) bool {
	t.Helper()
	ok, err := s.Lease(ctx, ev, holder, ttl)
	check(t, err)
	return ok
}
