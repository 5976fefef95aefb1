package meter

import (
	"math/bits"
	"time"
)

// The latency histogram is log-linear over whole microseconds: values
// below subBuckets µs have a bucket each, and every power of two from
// subBuckets µs to 2^maxExp µs is split into subBuckets equal buckets, so
// a bucket is at most 1/subBuckets of its lower bound wide. Values of
// 2^maxExp µs (about 134 s) and more share the last bucket.
const (
	subBits    = 4
	subBuckets = 1 << subBits
	maxExp     = 27
	numBuckets = subBuckets + (maxExp-subBits)*subBuckets
)

// bucketOf is the histogram bucket of a latency of us microseconds.
func bucketOf(us uint64) int {
	if us < subBuckets {
		return int(us)
	}
	exp := bits.Len64(us) - 1
	if exp >= maxExp {
		return numBuckets - 1
	}
	return subBuckets + (exp-subBits)*subBuckets + int((us>>(exp-subBits))&(subBuckets-1))
}

// bucketBounds is the range [lo, hi) of bucket i in microseconds (the
// last bucket also holds everything from hi up).
func bucketBounds(i int) (lo, hi uint64) {
	if i < subBuckets {
		return uint64(i), uint64(i) + 1
	}
	j := i - subBuckets
	shift := uint(j / subBuckets)
	lo = uint64(subBuckets+j%subBuckets) << shift
	return lo, lo + 1<<shift
}

// bucketMid is the latency a percentile in bucket i is reported as: the
// middle of the bucket, within half a bucket width of any value in it.
func bucketMid(i int) time.Duration {
	lo, hi := bucketBounds(i)
	return time.Duration(lo)*time.Microsecond + time.Duration(hi-lo)*time.Microsecond/2
}

// percentile is the latency below which a share q (0 < q ≤ 1) of the
// weighted counts h lie, given their total; 0 when total is 0.
func percentile(h *[numBuckets]float64, total, q float64) time.Duration {
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
			return bucketMid(i)
		}
	}
	return bucketMid(last)
}

// mean is the mean of the histogram, each count taken at its bucket's
// midpoint (within the buckets' 3.2 % from 16 µs up).
func mean(h *[numBuckets]float64, total float64) time.Duration {
	if !(total > 0) {
		return 0
	}
	sum := 0.0
	for i, c := range h {
		if c > 0 {
			sum += c * float64(bucketMid(i))
		}
	}
	return time.Duration(sum / total)
}
