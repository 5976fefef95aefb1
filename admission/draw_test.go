package admission

import (
	"bytes"
	crand "crypto/rand"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func visitors(rng *rand.Rand, n int) []VisitorID {
	vs := make([]VisitorID, n)
	for i := range vs {
		for j := range vs[i] {
			vs[i][j] = byte(rng.UintN(256))
		}
	}
	return vs
}

func testRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed*7+1)) }

// TestOrderMatchesNaiveSort checks Order (parallel prefix keys, in-place
// permutation, dedupe) against sorting by the full key.
func TestOrderMatchesNaiveSort(t *testing.T) {
	rng := testRand(1)
	for _, n := range []int{0, 1, 2, 3, 17, 1000, 20_000} {
		seed := []byte("seed-" + string(rune('a'+n%26)))
		members := visitors(rng, n)
		if n > 3 { // duplicates, as a retried append leaves them
			members = append(members, members[0], members[n/2], members[0])
		}
		want := slices.Clone(members)
		slices.SortFunc(want, func(a, b VisitorID) int {
			ka, kb := DrawKey(seed, a), DrawKey(seed, b)
			return bytes.Compare(ka[:], kb[:])
		})
		want = slices.Compact(want)
		got := Order(seed, slices.Clone(members))
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d: Order disagrees with a plain sort by key", n)
		}
		for i, v := range got {
			if Find(seed, got, v) != i {
				t.Fatalf("n=%d: Find(%d) = %d", n, i, Find(seed, got, v))
			}
		}
		if n > 0 && Find(seed, got, visitors(rng, 1)[0]) != -1 {
			t.Fatalf("n=%d: Find found a stranger", n)
		}
	}
}

// TestAuditRecomputes: from the published commitment, seed and hashes
// anyone can check the order; any swap, a wrong seed or a seed that does
// not match the commitment is caught.
func TestAuditRecomputes(t *testing.T) {
	rng := testRand(2)
	seed := []byte("0123456789abcdef0123456789abcdef")
	ordered := Order(seed, visitors(rng, 500))
	hashes := make([][32]byte, len(ordered))
	for i, v := range ordered {
		hashes[i] = VisitorHash(v)
	}
	c := Commitment(seed)
	if !CheckAudit(c, seed, hashes) {
		t.Fatal("the published order does not check")
	}
	swapped := slices.Clone(hashes)
	swapped[10], swapped[11] = swapped[11], swapped[10]
	if CheckAudit(c, seed, swapped) {
		t.Fatal("a swapped order checks")
	}
	other := []byte("another seed, another order......")
	if CheckAudit(Commitment(other), other, hashes) {
		t.Fatal("the order checks under another seed")
	}
	if CheckAudit(c, other, hashes) {
		t.Fatal("a seed that does not match the commitment checks")
	}
}

// spearman is the rank correlation of two permutations of 0..n-1.
func spearman(a, b []int) float64 {
	n := float64(len(a))
	var d2 float64
	for i := range a {
		d := float64(a[i] - b[i])
		d2 += d * d
	}
	return 1 - 6*d2/(n*(n*n-1))
}

// TestPrequeueOrderIgnoresArrival: over 100,000 pre-queue visitors the
// drawn position does not depend on when they arrived (|rho| < 0.05).
func TestPrequeueOrderIgnoresArrival(t *testing.T) {
	rng := testRand(3)
	const n = 100_000
	members := visitors(rng, n)
	arrival := make(map[VisitorID]int, n)
	for i, v := range members {
		arrival[v] = i
	}
	seed := make([]byte, SeedSize)
	for i := range seed {
		seed[i] = byte(rng.UintN(256))
	}
	ordered := Order(seed, slices.Clone(members))
	pos := make([]int, n)
	arr := make([]int, n)
	for i, v := range ordered {
		pos[i], arr[i] = i, arrival[v]
	}
	if rho := spearman(pos, arr); math.Abs(rho) >= 0.05 {
		t.Fatalf("Spearman rho between arrival and drawn position = %.4f, want |rho| < 0.05", rho)
	} else {
		t.Logf("Spearman rho over %d visitors = %+.5f", n, rho)
	}
}

// TestDrawIsUniform: across many draws of a 10-member tranche, each
// arrival slot lands in each position equally often (chi-square, 81
// degrees of freedom, Wilson-Hilferty z < 3.3, i.e. p > 0.0005).
func TestDrawIsUniform(t *testing.T) {
	rng := testRand(4)
	const size, trials = 10, 20_000
	var counts [size][size]float64
	for range trials {
		members := visitors(rng, size)
		seed := make([]byte, SeedSize)
		for i := range seed {
			seed[i] = byte(rng.UintN(256))
		}
		slot := map[VisitorID]int{}
		for i, v := range members {
			slot[v] = i
		}
		for p, v := range Order(seed, members) {
			counts[slot[v]][p]++
		}
	}
	expected := float64(trials) / size
	chi2 := 0.0
	for i := range counts {
		for j := range counts[i] {
			d := counts[i][j] - expected
			chi2 += d * d / expected
		}
	}
	k := float64((size - 1) * (size - 1))
	z := (math.Cbrt(chi2/k) - (1 - 2/(9*k))) / math.Sqrt(2/(9*k))
	t.Logf("chi-square = %.1f on %v degrees of freedom (z = %.2f)", chi2, k, z)
	if z > 3.3 {
		t.Fatalf("the draw is not uniform: chi-square %.1f (z %.2f)", chi2, z)
	}
}

func TestTranches(t *testing.T) {
	base := testTime()
	cfg := &EventConfig{QueueOpensAt: base, OnSaleAt: base.Add(60e9), Tranche: 5e9}
	for _, tc := range []struct {
		offset float64 // seconds after the queue opens
		want   int
	}{{0, 0}, {59.999, 0}, {60, 1}, {64.999, 1}, {65, 2}, {3660, 721}} {
		at := base.Add(secs(tc.offset))
		if got := trancheAt(cfg, at); got != tc.want {
			t.Errorf("trancheAt(+%vs) = %d, want %d", tc.offset, got, tc.want)
		}
	}
	if !trancheCloses(cfg, 0).Equal(cfg.OnSaleAt) || !trancheCloses(cfg, 2).Equal(cfg.OnSaleAt.Add(10e9)) {
		t.Fatal("tranche close times")
	}
}

func BenchmarkOrder100k(b *testing.B) {
	members := visitors(testRand(5), 100_000)
	seed := []byte("bench seed")
	b.ReportAllocs()
	for b.Loop() {
		Order(seed, slices.Clone(members))
	}
}

func BenchmarkFind(b *testing.B) {
	seed := []byte("bench seed")
	ordered := Order(seed, visitors(testRand(6), 1_000_000))
	v := ordered[123_456]
	b.ReportAllocs()
	for b.Loop() {
		if Find(seed, ordered, v) < 0 {
			b.Fatal("not found")
		}
	}
}

// TestVerifyAudit: VerifyAudit names what is wrong with a tampered draw.
func TestVerifyAudit(t *testing.T) {
	seed := make([]byte, SeedSize)
	crand.Read(seed)
	members := make([]VisitorID, 50)
	for i := range members {
		members[i] = NewVisitorID()
	}
	ordered := Order(seed, members)
	hashes := make([][32]byte, len(ordered))
	for i, v := range ordered {
		hashes[i] = VisitorHash(v)
	}
	c := Commitment(seed)
	if err := VerifyAudit(c, seed, hashes); err != nil {
		t.Fatalf("a true draw: %v", err)
	}
	other := append([]byte(nil), seed...)
	other[0] ^= 1
	if err := VerifyAudit(c, other, hashes); !errors.Is(err, ErrCommitmentMismatch) {
		t.Errorf("another seed: %v", err)
	}
	swapped := append([][32]byte(nil), hashes...)
	swapped[20], swapped[21] = swapped[21], swapped[20]
	var oe *OrderError
	if err := VerifyAudit(c, seed, swapped); !errors.As(err, &oe) || oe.Index != 21 || oe.Duplicate || oe.Hash != hashes[20] {
		t.Errorf("two entries swapped: %v", err)
	}
	dup := append([][32]byte(nil), hashes[:10]...)
	dup = append(dup, hashes[9])
	if err := VerifyAudit(c, seed, dup); !errors.As(err, &oe) || oe.Index != 10 || !oe.Duplicate {
		t.Errorf("an entry twice: %v", err)
	}
	if CheckAudit(c, seed, swapped) || !CheckAudit(c, seed, hashes) {
		t.Error("CheckAudit disagrees with VerifyAudit")
	}
}
