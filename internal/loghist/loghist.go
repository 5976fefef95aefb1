package loghist

import (
	"math/bits"
	"time"
)

// The histogram is log-linear over whole microseconds: values
// below SubBuckets µs have a bucket each, and every power of two from
// SubBuckets µs to 2^MaxExp µs is split into SubBuckets equal buckets, so
// a bucket is at most 1/SubBuckets of its lower bound wide. Values of
// 2^MaxExp µs (about 134 s) and more share the last bucket.
const (
	SubBits    = 4                                        // log2 of SubBuckets
	SubBuckets = 1 << SubBits                             // buckets per power of two
	MaxExp     = 27                                       // latencies from 2^MaxExp µs share the last bucket
	Buckets    = SubBuckets + (MaxExp-SubBits)*SubBuckets // how many buckets there are
)

// Bucket is the histogram bucket of a latency of us microseconds.
func Bucket(us uint64) int {
	if us < SubBuckets {
		return int(us)
	}
	exp := bits.Len64(us) - 1
	if exp >= MaxExp {
		return Buckets - 1
	}
	return SubBuckets + (exp-SubBits)*SubBuckets + int((us>>(exp-SubBits))&(SubBuckets-1))
}

// Bounds is the range [lo, hi) of bucket i in microseconds (the
// last bucket also holds everything from hi up).
func Bounds(i int) (lo, hi uint64) {
	if i < SubBuckets {
		return uint64(i), uint64(i) + 1
	}
	j := i - SubBuckets
	shift := uint(j / SubBuckets)
	lo = uint64(SubBuckets+j%SubBuckets) << shift
	return lo, lo + 1<<shift
}

// Mid is the latency a percentile in bucket i is reported as: the
// middle of the bucket, within half a bucket width of any value in it.
func Mid(i int) time.Duration {
	lo, hi := Bounds(i)
	return time.Duration(lo)*time.Microsecond + time.Duration(hi-lo)*time.Microsecond/2
}

// percentile is the latency below which a share q (0 < q ≤ 1) of the
// weighted counts h lie, given their total; 0 when total is 0.
func Percentile(h *[Buckets]float64, total, q float64) time.Duration {
	if !(total > 0) {
		return 0
	}
	// A small tolerance keeps fractional weights (the oldest slot's share)
	// from pushing an exact rank into the next bucket by rounding.
	rank := q*total - 1e-9*total
	cum := 0.0
	last := 0
	for i, c := range h {
		if c <= 0 {
			continue
		}
		last = i
		cum += c
		if cum >= rank {
			return Mid(i)
		}
	}
	return Mid(last)
}

// mean is the mean of the histogram, each count taken at its bucket's
// midpoint (within the buckets' 3.2 % from 16 µs up).
func Mean(h *[Buckets]float64, total float64) time.Duration {
	if !(total > 0) {
		return 0
	}
	sum := 0.0
	for i, c := range h {
		if c > 0 {
			sum += c * float64(Mid(i))
		}
	}
	return time.Duration(sum / total)
}
