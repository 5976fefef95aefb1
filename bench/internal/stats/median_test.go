package stats

import (
	"math"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	in := []float64{3, 1, 2}
	if m := Median(in); m != 2 {
		t.Errorf("Median(3,1,2) = %v", m)
	}
	if in[0] != 3 {
		t.Error("Median sorted its argument")
	}
	if m := Median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("Median(4,1,3,2) = %v", m)
	}
	if m := Median([]float64(nil)); !math.IsNaN(m) {
		t.Errorf("Median of nothing = %v, want NaN", m)
	}
	if m := Median([]time.Duration{3 * time.Millisecond, time.Millisecond}); m != 2*time.Millisecond {
		t.Errorf("Median of durations = %v", m)
	}
	if m := Median([]time.Duration(nil)); m != 0 {
		t.Errorf("Median of no durations = %v", m)
	}
}
