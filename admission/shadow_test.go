package admission_test

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

func TestShadowQueueNeverAdmits(t *testing.T) {
	r := newRig(t)
	cfg := event("show")
	key := bytes.Repeat([]byte("k"), 32)
	e, err := admission.New(admission.Options{Store: r.store, Clock: r.clk.Now, Meter: r.meter,
		Rand: rand.NewChaCha8([32]byte{7}), Replica: "test", ShadowKey: key}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	if _, err := admission.New(admission.Options{Store: r.store, ShadowKey: []byte("short")}, cfg); err == nil {
		t.Fatal("a short shadow key was accepted")
	}
	r.at(t, time.Second)
	var real, shadow []admission.Ticket
	for i := range 30 {
		tk := r.join(t, "show", admission.JoinRequest{Shadow: i%3 == 0})
		if i%3 == 0 {
			shadow = append(shadow, tk)
		} else {
			real = append(real, tk)
		}
		if e.Shadowed("show", tk.Visitor) != (i%3 == 0) {
			t.Fatalf("join %d: Shadowed = %v", i, !(i%3 == 0))
		}
	}
	admitted := map[int]bool{}
	for d := 62 * time.Second; d < 10*time.Minute && len(admitted) < len(real); d += time.Second {
		r.at(t, d)
		for i := range real {
			if res := r.status(t, "show", &real[i]); res.Pass != nil {
				admitted[i] = true
			}
		}
		for i := range shadow {
			res := r.status(t, "show", &shadow[i])
			if res.Pass != nil || res.Status.Kind == admission.StatusAdmitted {
				t.Fatalf("a shadow visitor was admitted: %+v", res.Status)
			}
			if shadow[i].Number == 0 || (res.Status.Kind != admission.StatusWaiting && res.Status.Kind != admission.StatusClosed) {
				t.Fatalf("a shadow visitor's status: %+v, ticket %+v", res.Status, shadow[i])
			}
		}
	}
	if len(admitted) != len(real) {
		t.Fatalf("%d of %d real visitors admitted", len(admitted), len(real))
	}
	// A shadow visitor whose number is reached waits, then their turn ends.
	for i := range shadow {
		res := r.status(t, "show", &shadow[i])
		if res.Status.Position != 0 {
			t.Fatalf("a reached shadow visitor at position %d", res.Status.Position)
		}
	}
	end := r.clk.Now().Add(admission.DefaultNoShowGrace + admission.DefaultSessionDuration)
	for r.clk.Now().Before(end) {
		r.at(t, r.clk.Now().Add(30*time.Second).Sub(t0))
		for i := range shadow {
			r.status(t, "show", &shadow[i])
		}
	}
	for i := range shadow {
		if res := r.status(t, "show", &shadow[i]); res.Status.Kind != admission.StatusClosed || res.Status.Reason != "session_ended" {
			t.Fatalf("a shadow visitor's turn did not end: %+v", res.Status)
		}
	}
	// Shadow numbers were passed over, not counted as no-shows.
	if f := e.Figures("show"); f.NoShowRate != 0 {
		t.Fatalf("no-show rate %v with shadow visitors", f.NoShowRate)
	}
}
