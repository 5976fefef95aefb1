// Cases on the leader's minute records (RecordMinute, Minutes).

package admissiontest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// wantMinutes checks the records of minutes in [from, to): their
// contents in order, each at a whole minute.
func wantMinutes(t *testing.T, s admission.Store, ev string, from, to time.Time, want ...string) []admission.MinuteRecord {
	t.Helper()
	got, err := s.Minutes(ctx, ev, from, to)
	check(t, err)
	var recs []string
	for i, r := range got {
		recs = append(recs, string(r.Record))
		if !r.Minute.Equal(r.Minute.Truncate(time.Minute)) || (i > 0 && !got[i-1].Minute.Before(r.Minute)) {
			t.Fatalf("Minutes gave minute %v after %v: not whole minutes in order", r.Minute, got[max(i-1, 0)].Minute)
		}
	}
	if fmt.Sprint(recs) != fmt.Sprint(want) {
		t.Fatalf("Minutes(%v, %v) = %q, want %q", from, to, recs, want)
	}
	return got
}

// testMinutes: one record per minute (the last written), read back in
// minute order over a half-open range, stored as given and not aliased,
// events apart.
func testMinutes(t *testing.T, s admission.Store) {
	ev, other := NewEventID(), NewEventID()
	m0 := time.Date(2026, 5, 1, 19, 0, 0, 0, time.UTC)
	wantMinutes(t, s, ev, m0.Add(-time.Hour), m0.Add(time.Hour))
	rec := []byte("{\"b\":\x00\xff}")
	check(t, s.RecordMinute(ctx, ev, m0.Add(2*time.Minute), []byte("m2"), time.Hour))
	check(t, s.RecordMinute(ctx, ev, m0, []byte("m0 first"), time.Hour))
	check(t, s.RecordMinute(ctx, ev, m0.Add(time.Minute), rec, time.Hour))
	check(t, s.RecordMinute(ctx, ev, m0.Add(30*time.Second), []byte("m0"), time.Hour)) // within minute 0: replaces it
	check(t, s.RecordMinute(ctx, other, m0, []byte("other"), time.Hour))
	rec[0] = 'x' // the store keeps its own copy
	got := wantMinutes(t, s, ev, m0, m0.Add(time.Hour), "m0", "{\"b\":\x00\xff}", "m2")
	if !got[0].Minute.Equal(m0) || !got[2].Minute.Equal(m0.Add(2*time.Minute)) {
		t.Fatalf("minutes = %v, %v, want %v and two later", got[0].Minute, got[2].Minute, m0)
	}
	got[0].Record[0] = 'y'
	wantMinutes(t, s, ev, m0, m0.Add(time.Minute), "m0")                                                    // to is excluded; not changed through a caller's slice
	wantMinutes(t, s, ev, m0.Add(time.Minute), m0.Add(2*time.Minute+time.Second), "{\"b\":\x00\xff}", "m2") // from is included
	wantMinutes(t, s, ev, m0.Add(3*time.Minute), m0.Add(time.Hour))
	wantMinutes(t, s, other, m0, m0.Add(time.Hour), "other")
	if err := s.RecordMinute(ctx, ev, m0, []byte("x"), 0); err == nil {
		t.Fatal("RecordMinute without a retention succeeded")
	}
}

// testMinutesExpire: a record is gone once its retention is over; the
// others stay.
func testMinutesExpire(t *testing.T, s admission.Store) {
	ev := NewEventID()
	m0 := time.Date(2026, 5, 1, 19, 0, 0, 0, time.UTC)
	check(t, s.RecordMinute(ctx, ev, m0, []byte("short"), 50*time.Millisecond))
	time.Sleep(300 * time.Millisecond)
	wantMinutes(t, s, ev, m0, m0.Add(time.Hour))
	check(t, s.RecordMinute(ctx, ev, m0.Add(time.Minute), []byte("long"), time.Hour))
	check(t, s.RecordMinute(ctx, ev, m0.Add(2*time.Minute), []byte("short again"), 50*time.Millisecond))
	time.Sleep(300 * time.Millisecond)
	wantMinutes(t, s, ev, m0, m0.Add(time.Hour), "long")
	// Written again, a minute is back.
	check(t, s.RecordMinute(ctx, ev, m0, []byte("again"), time.Hour))
	wantMinutes(t, s, ev, m0, m0.Add(time.Hour), "again", "long")
}

// testMinutesConcurrent: leaders writing minutes at once (a lead
// changing hands) each keep one record per minute, the last written.
func testMinutesConcurrent(t *testing.T, s admission.Store) {
	ev := NewEventID()
	m0 := time.Date(2026, 5, 1, 19, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 10 {
				if err := s.RecordMinute(ctx, ev, m0.Add(time.Duration(w)*time.Minute), fmt.Appendf(nil, "%d/%d", w, i), time.Hour); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	var want []string
	for w := range 8 {
		want = append(want, fmt.Sprintf("%d/9", w))
	}
	wantMinutes(t, s, ev, m0, m0.Add(time.Hour), want...)
}
