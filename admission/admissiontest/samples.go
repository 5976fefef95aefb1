// Cases on the replicas' measurement records (PublishSample, Samples).

package admissiontest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// testSamples: each replica has one record per event, the last one it
// published, stored as given and not aliased; events are apart.
func testSamples(t *testing.T, s admission.Store) {
	ev, other := NewEventID(), NewEventID()
	got, err := s.Samples(ctx, ev)
	check(t, err)
	if len(got) != 0 {
		t.Fatalf("Samples of a new event = %v", got)
	}
	rec := []byte("a\x00\xff binary record")
	check(t, s.PublishSample(ctx, ev, "a", rec, time.Minute))
	check(t, s.PublishSample(ctx, ev, "b", []byte("b1"), time.Minute))
	check(t, s.PublishSample(ctx, ev, "b", []byte("b2"), time.Minute))
	check(t, s.PublishSample(ctx, other, "c", []byte("c1"), time.Minute))
	rec[0] = 'x' // the store keeps its own copy
	got, err = s.Samples(ctx, ev)
	check(t, err)
	if len(got) != 2 || string(got["a"]) != "a\x00\xff binary record" || string(got["b"]) != "b2" {
		t.Fatalf("Samples = %q, want a's record and b's second", got)
	}
	got["a"][0] = 'y'
	if again, _ := s.Samples(ctx, ev); !bytes.Equal(again["a"], []byte("a\x00\xff binary record")) {
		t.Fatalf("stored record changed through a caller's slice: %q", again["a"])
	}
	if got, _ := s.Samples(ctx, other); len(got) != 1 || string(got["c"]) != "c1" {
		t.Fatalf("another event's Samples = %q", got)
	}
	if err := s.PublishSample(ctx, ev, "", []byte("x"), time.Minute); err == nil {
		t.Fatal("PublishSample without a replica succeeded")
	}
	if err := s.PublishSample(ctx, ev, "a", []byte("x"), 0); err == nil {
		t.Fatal("PublishSample without a ttl succeeded")
	}
}

// testSamplesExpire: a record not published again within its ttl is
// gone; the others stay.
func testSamplesExpire(t *testing.T, s admission.Store) {
	ev := NewEventID()
	check(t, s.PublishSample(ctx, ev, "dead", []byte("d"), 50*time.Millisecond))
	check(t, s.PublishSample(ctx, ev, "live", []byte("l"), time.Minute))
	time.Sleep(300 * time.Millisecond)
	got, err := s.Samples(ctx, ev)
	check(t, err)
	if len(got) != 1 || string(got["live"]) != "l" {
		t.Fatalf("Samples after a record's ttl = %q, want the live one only", got)
	}
	// Published again, it is back.
	check(t, s.PublishSample(ctx, ev, "dead", []byte("d2"), time.Minute))
	if got, _ := s.Samples(ctx, ev); len(got) != 2 || string(got["dead"]) != "d2" {
		t.Fatalf("Samples after publishing again = %q", got)
	}
}

// testSamplesConcurrent: replicas publishing at once each keep their
// own record.
func testSamplesConcurrent(t *testing.T, s admission.Store) {
	ev := NewEventID()
	var wg sync.WaitGroup
	for r := range 8 {
		wg.Go(func() {
			for i := range 20 {
				if err := s.PublishSample(ctx, ev, fmt.Sprint("r", r), fmt.Appendf(nil, "%d/%d", r, i), time.Minute); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, err := s.Samples(ctx, ev)
	check(t, err)
	if len(got) != 8 {
		t.Fatalf("%d records after 8 replicas published, want 8", len(got))
	}
	for r := range 8 {
		if want := fmt.Sprintf("%d/19", r); string(got[fmt.Sprint("r", r)]) != want {
			t.Fatalf("replica r%d's record = %q, want its last, %q", r, got[fmt.Sprint("r", r)], want)
		}
	}
}
