// Cases on the event records: the events made or changed at run time.

package admissiontest

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/waitroom/waitroom/admission"
)

// recordsOf returns the records of the given ids (stores may be shared
// by other tests' records), checking the whole list is sorted by id.
func recordsOf(t *testing.T, s admission.Store, ids ...string) map[string]admission.EventRecord {
	t.Helper()
	all, err := s.EventRecords(ctx)
	check(t, err)
	out := map[string]admission.EventRecord{}
	for i, r := range all {
		if i > 0 && strings.Compare(all[i-1].ID, r.ID) >= 0 {
			t.Fatalf("EventRecords not sorted by id: %q before %q", all[i-1].ID, r.ID)
		}
		for _, id := range ids {
			if r.ID == id {
				out[id] = r
			}
		}
	}
	return out
}

// testEventRecords: put, replace and delete with revisions; a stale or
// missing revision is ErrRecordConflict and changes nothing; bodies are
// the store's own copies; an oversized body is refused.
func testEventRecords(t *testing.T, s admission.Store) {
	a, b := NewEventID(), NewEventID()
	if got := recordsOf(t, s, a, b); len(got) != 0 {
		t.Fatalf("records before any: %v", got)
	}
	body := []byte(`{"event":{"id":"a","name":"A"}}`)
	rev, err := s.PutEventRecord(ctx, a, body, 0)
	if err != nil || rev != 1 {
		t.Fatalf("first Put = %d, %v", rev, err)
	}
	body[0] = 'x' // the store keeps its own copy
	if _, err := s.PutEventRecord(ctx, a, []byte("again"), 0); !errors.Is(err, admission.ErrRecordConflict) {
		t.Fatalf("Put over an existing record with revision 0: %v", err)
	}
	if _, err := s.PutEventRecord(ctx, b, []byte("b"), 3); !errors.Is(err, admission.ErrRecordConflict) {
		t.Fatalf("Put of a missing record with revision 3: %v", err)
	}
	rev, err = s.PutEventRecord(ctx, b, []byte("b: with a colon: and \x00 binary"), 0)
	check(t, err)
	if rev != 1 {
		t.Fatalf("b's first revision %d", rev)
	}
	got := recordsOf(t, s, a, b)
	if len(got) != 2 || got[a].Revision != 1 || string(got[a].Body) != `{"event":{"id":"a","name":"A"}}` ||
		string(got[b].Body) != "b: with a colon: and \x00 binary" {
		t.Fatalf("records: %+v", got)
	}
	got[a].Body[0] = 'y' // nor a reader's
	if rev, err = s.PutEventRecord(ctx, a, []byte("v2"), 1); err != nil || rev != 2 {
		t.Fatalf("Put at revision 1 = %d, %v", rev, err)
	}
	if _, err := s.PutEventRecord(ctx, a, []byte("stale"), 1); !errors.Is(err, admission.ErrRecordConflict) {
		t.Fatalf("Put at a stale revision: %v", err)
	}
	if err := s.DeleteEventRecord(ctx, a, 1); !errors.Is(err, admission.ErrRecordConflict) {
		t.Fatalf("Delete at a stale revision: %v", err)
	}
	if got := recordsOf(t, s, a); got[a].Revision != 2 || string(got[a].Body) != "v2" {
		t.Fatalf("after refused changes: %+v", got[a])
	}
	check(t, s.DeleteEventRecord(ctx, a, 2))
	if got := recordsOf(t, s, a, b); len(got) != 1 || got[b].Revision != 1 {
		t.Fatalf("after deleting a: %+v", got)
	}
	if err := s.DeleteEventRecord(ctx, a, 2); !errors.Is(err, admission.ErrRecordConflict) {
		t.Fatalf("Delete of a deleted record: %v", err)
	}
	// Made again, it starts over.
	if rev, err := s.PutEventRecord(ctx, a, []byte("v1 again"), 0); err != nil || rev != 1 {
		t.Fatalf("Put after delete = %d, %v", rev, err)
	}
	big := bytes.Repeat([]byte("x"), admission.MaxEventRecord+1)
	if _, err := s.PutEventRecord(ctx, b, big, 1); !errors.Is(err, admission.ErrRecordTooLarge) {
		t.Fatalf("oversized Put: %v", err)
	}
	check(t, s.DeleteEventRecord(ctx, a, 1))
	check(t, s.DeleteEventRecord(ctx, b, 1))
}

// testEventRecordsConcurrent: of writers racing from one revision,
// exactly one wins and the record is its body.
func testEventRecordsConcurrent(t *testing.T, s admission.Store) {
	id := NewEventID()
	_, err := s.PutEventRecord(ctx, id, []byte("start"), 0)
	check(t, err)
	const n = 16
	var wg sync.WaitGroup
	wins := make(chan string, n)
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := "writer-" + string(rune('a'+i))
			_, err := s.PutEventRecord(ctx, id, []byte(body), 1)
			switch {
			case err == nil:
				wins <- body
			case !errors.Is(err, admission.ErrRecordConflict):
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(wins)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var won []string
	for w := range wins {
		won = append(won, w)
	}
	if len(won) != 1 {
		t.Fatalf("%d writers won from one revision: %v", len(won), won)
	}
	if got := recordsOf(t, s, id)[id]; got.Revision != 2 || string(got.Body) != won[0] {
		t.Fatalf("record %+v, winner %s", got, won[0])
	}
	check(t, s.DeleteEventRecord(ctx, id, 2))
}
