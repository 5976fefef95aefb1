package loghist

import (
	"math"
	"testing"
	"time"
)

// checkBucket fails when Bucket(us) does not hold us, or when its
// midpoint is further from us than the documented error.
func checkBucket(t testing.TB, us uint64) {
	t.Helper()
	i := Bucket(us)
	if i < 0 || i >= Buckets {
		t.Fatalf("Bucket(%d) = %d, out of range", us, i)
	}
	lo, hi := Bounds(i)
	if us < lo || (us >= hi && i != Buckets-1) {
		t.Fatalf("Bucket(%d) = %d holds [%d, %d)", us, i, lo, hi)
	}
	if us >= 1<<MaxExp {
		return
	}
	// Any latency in [us, us+1) µs maps to this bucket: check both ends.
	for _, ns := range []float64{float64(us) * 1000, float64(us)*1000 + 999} {
		mid := float64(Mid(i))
		if us < SubBuckets {
			if d := math.Abs(mid - ns); d > 500 {
				t.Fatalf("latency %v ns reported as %v ns: %v ns off, want ≤ 500", ns, mid, d)
			}
			continue
		}
		if rel := math.Abs(mid-ns) / ns; rel > 1.0/32 {
			t.Fatalf("latency %v ns reported as %v ns: relative error %.4f > 1/32", ns, mid, rel)
		}
	}
}

func TestBuckets(t *testing.T) {
	tests := []struct {
		name string
		us   uint64
		want int
	}{
		{"zero", 0, 0},
		{"last exact", 15, 15},
		{"first log", 16, 16},
		{"end of first octave", 31, 31},
		{"second octave", 32, 32},
		{"second octave, second bucket", 34, 33},
		{"1 ms", 1000, Bucket(1000)},
		{"just below the cap", 1<<MaxExp - 1, Buckets - 1},
		{"the cap", 1 << MaxExp, Buckets - 1},
		{"an hour", uint64(time.Hour / time.Microsecond), Buckets - 1},
		{"max", math.MaxUint64, Buckets - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Bucket(tc.us); got != tc.want {
				t.Errorf("Bucket(%d) = %d, want %d", tc.us, got, tc.want)
			}
			checkBucket(t, tc.us)
		})
	}
	t.Run("contiguous", func(t *testing.T) {
		var prevHi uint64
		for i := range Buckets {
			lo, hi := Bounds(i)
			if lo != prevHi || hi <= lo {
				t.Fatalf("bucket %d is [%d, %d), previous ended at %d", i, lo, hi, prevHi)
			}
			if Bucket(lo) != i || Bucket(hi-1) != i {
				t.Fatalf("bucket %d [%d, %d): bounds map to %d and %d", i, lo, hi, Bucket(lo), Bucket(hi-1))
			}
			prevHi = hi
		}
		if prevHi != 1<<MaxExp {
			t.Fatalf("buckets end at %d µs, want %d", prevHi, 1<<MaxExp)
		}
	})
	t.Run("every value to 70 ms", func(t *testing.T) {
		for us := uint64(0); us < 70_000; us++ {
			checkBucket(t, us)
		}
	})
}

func TestPercentile(t *testing.T) {
	ms := func(n int) uint64 { return uint64(n) * 1000 }
	tests := []struct {
		name   string
		values []uint64 // µs, one count each
		q      float64
		want   time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one value", []uint64{ms(20)}, 0.95, 20 * time.Millisecond},
		{"median of 1..100 ms", seq(ms(1), ms(100), ms(1)), 0.50, 50 * time.Millisecond},
		{"p95 of 1..100 ms", seq(ms(1), ms(100), ms(1)), 0.95, 95 * time.Millisecond},
		{"p100 of 1..100 ms", seq(ms(1), ms(100), ms(1)), 1, 100 * time.Millisecond},
		{"tiny latencies", []uint64{3, 3, 3, 7}, 0.5, 3500 * time.Nanosecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h [Buckets]float64
			for _, v := range tc.values {
				h[Bucket(v)]++
			}
			got := Percentile(&h, float64(len(tc.values)), tc.q)
			if !within(got, tc.want) {
				t.Errorf("percentile %v = %v, want %v within 1/32", tc.q, got, tc.want)
			}
		})
	}
}

func seq(from, to, step uint64) []uint64 {
	var s []uint64
	for v := from; v <= to; v += step {
		s = append(s, v)
	}
	return s
}

// within tells whether got is want within the histogram's error (1/32,
// or 0.5 µs for tiny values).
func within(got, want time.Duration) bool {
	d := math.Abs(float64(got - want))
	return d <= 500 || d <= float64(want)/32
}

// FuzzBucketOf checks that any latency lands in a bucket that holds it,
// reported within the documented error.
func FuzzBucketOf(f *testing.F) {
	for _, v := range []uint64{0, 1, 15, 16, 17, 1000, 123456, 1<<MaxExp - 1, 1 << MaxExp, math.MaxUint64} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, us uint64) { checkBucket(t, us) })
}
