package netlimit

import (
	"sync"
	"testing"
)

func TestBudgetReserves(t *testing.T) {
	b, err := NewBudget(100, [NumClasses]float64{Admitted: 0.2, API: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	take := func(c Class, n int) int {
		got := 0
		for range n {
			if b.Acquire(c) {
				got++
			}
		}
		return got
	}
	// Anonymous traffic alone gets everything but the two reserves.
	if got := take(Anonymous, 1000); got != 60 {
		t.Fatalf("anonymous took %d slots, want 60", got)
	}
	// The reserves are there for their classes.
	if got := take(Admitted, 20); got != 20 {
		t.Fatalf("admitted took %d of its 20 reserved slots", got)
	}
	if got := take(API, 25); got != 20 {
		t.Fatalf("api took %d slots, want its 20 reserved ones", got)
	}
	if b.Acquire(Admitted) || b.Acquire(Anonymous) {
		t.Fatal("a full budget gave a slot")
	}
	// Freed anonymous slots may be borrowed by admitted visitors.
	for range 10 {
		b.Release(Anonymous)
	}
	if got := take(Admitted, 20); got != 10 {
		t.Fatalf("admitted borrowed %d freed slots, want 10", got)
	}
	if b.InUse(Admitted) != 30 || b.InUse(Anonymous) != 50 || b.InUse(API) != 20 {
		t.Fatalf("in use: admitted %d anonymous %d api %d", b.InUse(Admitted), b.InUse(Anonymous), b.InUse(API))
	}
}

func TestBudgetBorrowingKeepsReserves(t *testing.T) {
	b, err := NewBudget(10, [NumClasses]float64{Admitted: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	// The API has no reserve but may borrow: not into admitted's 3.
	n := 0
	for b.Acquire(API) {
		n++
	}
	if n != 7 {
		t.Fatalf("api took %d, want 7", n)
	}
	for range 3 {
		if !b.Acquire(Admitted) {
			t.Fatal("admitted's reserve was taken")
		}
	}
	if b.Acquire(Admitted) {
		t.Fatal("a full budget gave a slot")
	}
}

func TestBudgetBad(t *testing.T) {
	for _, shares := range [][NumClasses]float64{
		{Admitted: 0.5, API: 0.5}, {Admitted: -0.1}, {API: 1}, {Admitted: 2},
	} {
		if _, err := NewBudget(10, shares); err == nil {
			t.Errorf("shares %v accepted", shares)
		}
	}
	if _, err := NewBudget(-1, [NumClasses]float64{}); err == nil {
		t.Error("negative max accepted")
	}
	b, err := NewBudget(0, [NumClasses]float64{Admitted: 0.2})
	if err != nil || b != nil {
		t.Fatalf("max 0: %v, %v", b, err)
	}
	if !b.Acquire(Anonymous) {
		t.Fatal("a nil budget refused")
	}
	b.Release(Anonymous)
}

func TestBudgetConcurrent(t *testing.T) {
	b, _ := NewBudget(50, [NumClasses]float64{Admitted: 0.2, API: 0.2})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := Class(g % int(NumClasses))
			for range 2000 {
				if b.Acquire(c) {
					b.Release(c)
				}
			}
		}()
	}
	wg.Wait()
	for c := range NumClasses {
		if b.InUse(c) != 0 {
			t.Fatalf("%s holds %d slots after all released", c, b.InUse(c))
		}
	}
}
