// Cases on tranche members: order, isolation between tranches, lanes and
// events, concurrent appends, and copies that do not alias the store.

package admissiontest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/waitroom/waitroom/admission"
)

func appendAll(t *testing.T, s admission.Store, ev, lane string, tranche int, vs ...admission.VisitorID) {
	t.Helper()
	for _, v := range vs {
		if err := s.AppendMember(ctx, ev, lane, tranche, v); err != nil {
			t.Fatalf("AppendMember(%s, %s, %d): %v", ev, lane, tranche, err)
		}
	}
}

func wantMembers(t *testing.T, s admission.Store, ev, lane string, tranche int, want []admission.VisitorID) {
	t.Helper()
	got, err := s.Members(ctx, ev, lane, tranche)
	check(t, err)
	if len(got) != len(want) || (len(want) > 0 && !slices.Equal(got, want)) {
		t.Fatalf("Members(%s, %d) = %d members %v, want %d %v", lane, tranche, len(got), short(got), len(want), short(want))
	}
	n, err := s.MemberCount(ctx, ev, lane, tranche)
	check(t, err)
	if n != len(want) {
		t.Fatalf("MemberCount(%s, %d) = %d, want %d", lane, tranche, n, len(want))
	}
}

func short(vs []admission.VisitorID) string {
	if len(vs) > 4 {
		return fmt.Sprintf("%v…", vs[:4])
	}
	return fmt.Sprint(vs)
}

// testMembersOrder: members come back in append order, duplicates kept.
func testMembersOrder(t *testing.T, s admission.Store) {
	ev := NewEventID()
	v := ids(4)
	want := []admission.VisitorID{v[0], v[1], v[2], v[0], v[3], v[0]}
	for i, m := range want {
		appendAll(t, s, ev, public, 1, m)
		wantMembers(t, s, ev, public, 1, want[:i+1]) // visible once AppendMember returned
	}
}

// testMembersIsolation: events, lanes and tranches never see each
// other's members.
func testMembersIsolation(t *testing.T, s admission.Store) {
	ev1, ev2 := NewEventID(), NewEventID()
	v := ids(6)
	appendAll(t, s, ev1, public, 0, v[0])
	appendAll(t, s, ev1, public, 1, v[1], v[2])
	appendAll(t, s, ev1, "presale", 0, v[3])
	appendAll(t, s, ev2, public, 0, v[4])
	appendAll(t, s, ev1, "public:1", 0, v[5]) // a lane whose name looks like a key suffix
	wantMembers(t, s, ev1, public, 0, v[0:1])
	wantMembers(t, s, ev1, public, 1, v[1:3])
	wantMembers(t, s, ev1, "presale", 0, v[3:4])
	wantMembers(t, s, ev2, public, 0, v[4:5])
	wantMembers(t, s, ev1, "public:1", 0, v[5:6])
	wantMembers(t, s, ev1, public, 2, nil)
	wantMembers(t, s, ev2, public, 1, nil)
	wantMembers(t, s, ev2, "presale", 0, nil)
}

// testMembersConcurrent: concurrent appends all land, each writer's in
// its own order.
func testMembersConcurrent(t *testing.T, s admission.Store) {
	ev := NewEventID()
	const writers, each = 32, 60
	mine := make([][]admission.VisitorID, writers)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		mine[w] = ids(each)
		wg.Go(func() {
			for _, v := range mine[w] {
				if err := s.AppendMember(ctx, ev, public, 3, v); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := s.Members(ctx, ev, public, 3)
	check(t, err)
	if len(got) != writers*each {
		t.Fatalf("%d members after %d appends", len(got), writers*each)
	}
	pos := make(map[admission.VisitorID]int, len(got))
	for i, v := range got {
		pos[v] = i
	}
	for w, vs := range mine {
		for i, v := range vs {
			p, ok := pos[v]
			if !ok {
				t.Fatalf("writer %d's member %d is missing", w, i)
			}
			if i > 0 && p < pos[vs[i-1]] {
				t.Fatalf("writer %d's members are out of order", w)
			}
		}
	}
	n, err := s.MemberCount(ctx, ev, public, 3)
	check(t, err)
	if n != writers*each {
		t.Fatalf("MemberCount = %d, want %d", n, writers*each)
	}
}

// testMembersNotAliased: the caller owns the slice Members returns.
func testMembersNotAliased(t *testing.T, s admission.Store) {
	ev := NewEventID()
	v := ids(3)
	appendAll(t, s, ev, public, 0, v...)
	got, err := s.Members(ctx, ev, public, 0)
	check(t, err)
	slices.Reverse(got)
	got[0] = admission.VisitorID{}
	wantMembers(t, s, ev, public, 0, v)
}
