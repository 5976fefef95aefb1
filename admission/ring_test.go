package admission

import "testing"

// TestRing checks the ring against a plain slice through pushes, pops,
// growth across a wrapped head, setLast and clear.
func TestRing(t *testing.T) {
	var q ring[int]
	var want []int
	check := func(step string) {
		t.Helper()
		if q.len() != len(want) {
			t.Fatalf("%s: len %d, want %d", step, q.len(), len(want))
		}
		for i, w := range want {
			if got := q.at(i); got != w {
				t.Fatalf("%s: at(%d) = %d, want %d", step, i, got, w)
			}
		}
	}
	check("zero value")
	next := 0
	for round := range 5 {
		// Push more than pop each round, so the ring grows while its
		// head is away from the buffer's start.
		for range 3*ringMinCap/2 + round {
			q.push(next)
			want = append(want, next)
			next++
		}
		check("push")
		for range ringMinCap - 3 {
			q.pop()
			want = want[1:]
		}
		check("pop")
		q.setLast(-round)
		want[len(want)-1] = -round
		check("setLast")
	}
	q.clear()
	want = want[:0]
	check("clear")
	q.push(7)
	want = append(want, 7)
	check("push after clear")
}

// TestRingSteadyAllocs checks that a ring at its steady size allocates
// nothing per push and pop.
func TestRingSteadyAllocs(t *testing.T) {
	var q ring[[2]int64]
	for i := range 100 {
		q.push([2]int64{int64(i), 1})
	}
	allocs := testing.AllocsPerRun(1000, func() {
		q.push([2]int64{1, 2})
		q.pop()
	})
	if allocs != 0 {
		t.Errorf("push and pop at steady size: %v allocations, want 0", allocs)
	}
}
