// Accounts' places: the first place recorded for an account is the one
// every later join of the account gets back.

package admissiontest

import (
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// place is an account's place for visitor v, as the engine records it.
func place(v admission.VisitorID, lane string, tranche int) admission.AccountPlace {
	now := time.Now().Truncate(time.Second)
	return admission.AccountPlace{Visitor: v, Lane: lane, Tranche: tranche, IssuedAt: now, ExpiresAt: now.Add(time.Hour)}
}

// samePlace compares places by their instants, not their locations.
func samePlace(a, b admission.AccountPlace) bool {
	return a.Visitor == b.Visitor && a.Lane == b.Lane && a.Tranche == b.Tranche &&
		a.IssuedAt.Equal(b.IssuedAt) && a.ExpiresAt.Equal(b.ExpiresAt)
}

func placeAccount(t *testing.T, s admission.Store, ev, account string, p admission.AccountPlace, forget time.Time) (admission.AccountPlace, bool) {
	t.Helper()
	got, first, err := s.PlaceAccount(ctx, ev, account, p, forget)
	check(t, err)
	return got, first
}

func accountPlace(t *testing.T, s admission.Store, ev, account string) (admission.AccountPlace, bool) {
	t.Helper()
	got, ok, err := s.AccountPlace(ctx, ev, account)
	check(t, err)
	return got, ok
}

// testAccounts: an account's first place stands, whoever asks next; per
// account and per event.
func testAccounts(t *testing.T, s admission.Store) {
	ev := NewEventID()
	v := ids(3)
	forget := time.Now().Add(time.Hour)
	if _, ok := accountPlace(t, s, ev, "acct-a"); ok {
		t.Fatal("an account nobody placed has a place")
	}
	p0 := place(v[0], public, 2)
	if got, first := placeAccount(t, s, ev, "acct-a", p0, forget); !first || !samePlace(got, p0) {
		t.Fatalf("first PlaceAccount = %+v, %v", got, first)
	}
	// Another device, another lane, another visitor: the first place.
	for _, p := range []admission.AccountPlace{place(v[1], public, 3), place(v[1], "presale", 0), p0} {
		if got, first := placeAccount(t, s, ev, "acct-a", p, forget); first || !samePlace(got, p0) {
			t.Fatalf("PlaceAccount again = %+v, %v; want %+v", got, first, p0)
		}
	}
	if got, ok := accountPlace(t, s, ev, "acct-a"); !ok || !samePlace(got, p0) {
		t.Fatalf("AccountPlace = %+v, %v", got, ok)
	}
	p2 := place(v[2], "presale", 0)
	if got, first := placeAccount(t, s, ev, "acct-b", p2, forget); !first || !samePlace(got, p2) {
		t.Fatalf("another account's PlaceAccount = %+v, %v", got, first)
	}
	if _, ok := accountPlace(t, s, NewEventID(), "acct-a"); ok {
		t.Fatal("an account's place shows in another event")
	}
	if _, first := placeAccount(t, s, NewEventID(), "acct-a", p2, forget); !first {
		t.Fatal("an account placed in one event is not first in another")
	}
	// A place already forgotten is not recorded.
	if got, first := placeAccount(t, s, ev, "acct-c", p2, time.Now().Add(-time.Second)); !first || !samePlace(got, p2) {
		t.Fatalf("PlaceAccount with forget past = %+v, %v", got, first)
	}
	if _, ok := accountPlace(t, s, ev, "acct-c"); ok {
		t.Fatal("a place with forget past is remembered")
	}
}

// testAccountsConcurrent: of many concurrent first joins of one account,
// on any replica, exactly one place is recorded and all get it.
func testAccountsConcurrent(t *testing.T, s admission.Store) {
	ev := NewEventID()
	const n = 20
	v := ids(n)
	got := make([]admission.AccountPlace, n)
	firsts := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			got[i], firsts[i], errs[i] = s.PlaceAccount(ctx, ev, "shared", place(v[i], public, 1), time.Now().Add(time.Hour))
		})
	}
	wg.Wait()
	winner := -1
	for i := range n {
		check(t, errs[i])
		if firsts[i] {
			if winner >= 0 {
				t.Fatalf("joins %d and %d were both first", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no join was first")
	}
	for i := range n {
		if got[i].Visitor != v[winner] {
			t.Fatalf("join %d got visitor %s, the first place is %s's", i, got[i].Visitor, v[winner])
		}
	}
	if p, ok := accountPlace(t, s, ev, "shared"); !ok || p.Visitor != v[winner] {
		t.Fatalf("AccountPlace = %+v, %v", p, ok)
	}
}

// testAccountsExpire: a place is forgotten once forget is over, and the
// account may then be placed afresh.
func testAccountsExpire(t *testing.T, s admission.Store) {
	ev := NewEventID()
	v := ids(2)
	placeAccount(t, s, ev, "short", place(v[0], public, 0), time.Now().Add(300*time.Millisecond))
	placeAccount(t, s, ev, "long", place(v[0], public, 0), time.Now().Add(time.Hour))
	time.Sleep(600 * time.Millisecond)
	if _, ok := accountPlace(t, s, ev, "short"); ok {
		t.Fatal("a place past its forget is still there")
	}
	if _, ok := accountPlace(t, s, ev, "long"); !ok {
		t.Fatal("a place within its forget is gone")
	}
	p := place(v[1], public, 1)
	if got, first := placeAccount(t, s, ev, "short", p, time.Now().Add(time.Hour)); !first || !samePlace(got, p) {
		t.Fatalf("PlaceAccount after forget = %+v, %v", got, first)
	}
}
