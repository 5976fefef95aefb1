package admission

import (
	"testing"
	"time"
)

// TestDecisionLogRecordAllocs: once its ring exists, recording a decision
// at a tick allocates nothing, whatever the reason.
func TestDecisionLogRecordAllocs(t *testing.T) {
	d := newDecisionLog()
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	d.record(Decision{At: at, Reason: ReasonStart})
	i := 0
	if n := testing.AllocsPerRun(2*DecisionLogSize, func() {
		i++
		d.record(Decision{At: at.Add(time.Duration(i) * time.Second), Reason: Reasons[i%len(Reasons)], Limit: i})
	}); n != 0 {
		t.Fatalf("recording a decision allocates %v times", n)
	}
	if d.n != DecisionLogSize || len(d.ring) != DecisionLogSize {
		t.Fatalf("the ring holds %d of %d", d.n, len(d.ring))
	}
}
