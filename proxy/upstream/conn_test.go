package upstream

import (
	"net"
	"testing"
	"time"
)

// deadlineRecorder is a net.Conn that records the deadlines set on it.
type deadlineRecorder struct {
	net.Conn
	reads, writes []time.Time
}

func (d *deadlineRecorder) SetReadDeadline(t time.Time) error {
	d.reads = append(d.reads, t)
	return nil
}
func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.writes = append(d.writes, t)
	return nil
}
func (d *deadlineRecorder) SetDeadline(t time.Time) error {
	d.reads, d.writes = append(d.reads, t), append(d.writes, t)
	return nil
}

// TestLazyDeadlines: a deadline moves only when it would move by at least
// the slack (an eighth of the shorter timeout, at most a second), so it
// never fires more than the slack early; an earlier or a zero deadline
// always goes through.
func TestLazyDeadlines(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := &deadlineRecorder{}
	c := newLazyDeadlines(rec, 800*time.Millisecond, 30*time.Second)
	if c.slack != 100*time.Millisecond {
		t.Fatalf("slack %v, want an eighth of 800ms", c.slack)
	}
	steps := []struct {
		at   time.Duration // deadline asked, from t0
		sets bool
	}{
		{800 * time.Millisecond, true},
		{850 * time.Millisecond, false}, // 50ms later: within the slack
		{899 * time.Millisecond, false},
		{900 * time.Millisecond, true}, // a full slack later
		{500 * time.Millisecond, true}, // earlier than the one set
		{2 * time.Second, true},
	}
	for i, s := range steps {
		before := len(rec.reads)
		if err := c.SetReadDeadline(t0.Add(s.at)); err != nil {
			t.Fatal(err)
		}
		if got := len(rec.reads) > before; got != s.sets {
			t.Fatalf("step %d (%v): set = %v, want %v", i, s.at, got, s.sets)
		}
		if last := rec.reads[len(rec.reads)-1]; t0.Add(s.at).Sub(last) >= c.slack || last.After(t0.Add(s.at)) {
			t.Fatalf("step %d: the deadline stands at %v for %v", i, last.Sub(t0), s.at)
		}
	}
	// Write deadlines are tracked apart from read ones.
	if c.SetWriteDeadline(t0.Add(2 * time.Second)); len(rec.writes) != 1 {
		t.Fatal("the first write deadline was skipped")
	}
	// Clearing always goes through, and the next deadline is set again.
	before := len(rec.reads)
	c.SetReadDeadline(time.Time{})
	c.SetReadDeadline(t0.Add(2 * time.Second))
	if len(rec.reads) != before+2 {
		t.Fatalf("%d reads set after clearing, want 2", len(rec.reads)-before)
	}
	if c := newLazyDeadlines(rec, time.Minute); c.slack != maxDeadlineSlack {
		t.Fatalf("slack %v for a minute, want %v", c.slack, maxDeadlineSlack)
	}
}
