package stats

import (
	"math"
	"slices"
)

// Median returns the median of v (the mean of the two middle values when
// len(v) is even) without changing v. Of no values it is NaN for floats
// and 0 for integers and durations.
func Median[T ~int64 | ~float64](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	switch n := len(s); {
	case n == 0:
		var zero T
		if f, ok := any(&zero).(*float64); ok {
			*f = math.NaN()
		}
		return zero
	case n%2 == 0:
		return (s[n/2-1] + s[n/2]) / 2
	default:
		return s[n/2]
	}
}
