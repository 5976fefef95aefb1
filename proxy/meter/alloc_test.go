package meter

import (
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// TestHotPathAllocs: the calls the proxy makes on every request allocate
// nothing, whether a slot or an epoch is being recycled or not.
func TestHotPathAllocs(t *testing.T) {
	m, c := newTestMeter(t, Options{Shards: 4})
	e := m.Event("ev")
	var p, named Presence
	named.Identify(admission.VisitorID{1, 2, 3})
	tests := []struct {
		name string
		step time.Duration // the clock moves by it before each run
		fn   func()
	}{
		{"Start+Done", 0, func() { e.Done(e.Start(), 200, false) }},
		{"Start+Done failed", 0, func() { e.Done(e.Start(), 0, true) }},
		{"Start+Done across slots", 700 * time.Millisecond, func() { e.Done(e.Start(), 503, false) }},
		{"Seen", 0, func() { e.Seen(&p) }},
		{"Seen across epochs", 3 * time.Second, func() { e.Seen(&p) }},
		{"Complete", 0, func() { e.Complete(&p) }},
		{"StartAt+DoneAt", 0, func() { e.DoneAt(e.StartAt(c.Now()), c.Now(), 200, false) }},
		{"SeenAt across epochs", 3 * time.Second, func() { e.SeenAt(&p, c.Now()) }},
		{"SeenAt identified across epochs", 3 * time.Second, func() { e.SeenAt(&named, c.Now()) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := testing.AllocsPerRun(1000, func() {
				c.Add(tc.step)
				tc.fn()
			})
			if n != 0 {
				t.Errorf("%v allocations per call, want 0", n)
			}
		})
	}
	t.Run("Measure", func(t *testing.T) {
		if n := testing.AllocsPerRun(100, func() { m.Measure("ev", c.Now()) }); n != 0 {
			t.Errorf("%v allocations per Measure, want 0", n)
		}
	})
}
