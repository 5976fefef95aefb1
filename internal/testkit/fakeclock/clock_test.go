package fakeclock

import (
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	t0 := time.Date(2027, 3, 1, 10, 0, 0, 5, time.UTC)
	c := New(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("Now = %v, want %v", got, t0)
	}
	c.Add(90 * time.Second)
	if got := c.Now(); !got.Equal(t0.Add(90 * time.Second)) {
		t.Fatalf("after Add: %v", got)
	}
	c.Set(t0.Add(-time.Hour))
	if got := c.Now(); !got.Equal(t0.Add(-time.Hour)) {
		t.Fatalf("after Set: %v", got)
	}
}
