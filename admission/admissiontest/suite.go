package admissiontest

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// Harness tells the suite how to get stores.
type Harness struct {
	// New returns a store to test. Tests use fresh event ids, so stores
	// may share a backend.
	New func(t *testing.T) admission.Store
	// Reopen closes s and returns a store over the same durable state
	// (nil: the persistence test is skipped).
	Reopen func(t *testing.T, s admission.Store) admission.Store
	// SharedLease is set for a store shared by several processes, whose
	// Lease grants an event to one holder at a time; unset, every holder
	// leads (the one process of an embedded store).
	SharedLease bool
}

// Run runs the conformance suite against the stores of h.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s admission.Store)
	}{
		{"Empty", testEmpty},
		{"MembersOrder", testMembersOrder},
		{"MembersIsolation", testMembersIsolation},
		{"MembersConcurrent", testMembersConcurrent},
		{"MembersNotAliased", testMembersNotAliased},
		{"Seed", testSeed},
		{"SeedConcurrent", testSeedConcurrent},
		{"RecordDrawFirst", testRecordDrawFirst},
		{"RecordDrawSequence", testRecordDrawSequence},
		{"RecordDrawIdentical", testRecordDrawIdentical},
		{"RecordDrawConcurrent", testRecordDrawConcurrent},
		{"Draws", testDraws},
		{"Advance", testAdvance},
		{"AdvanceConcurrent", testAdvanceConcurrent},
		{"Serving", testServing},
		{"Claims", testClaims},
		{"ClaimedRanges", testClaimedRanges},
		{"Revocations", testRevocations},
		{"RevocationsExpire", testRevocationsExpire},
		{"VisitorBars", testVisitorBars},
		{"VisitorBarsExpire", testVisitorBarsExpire},
		{"Invites", testInvites},
		{"InvitesConcurrent", testInvitesConcurrent},
		{"Control", testControl},
		{"Controller", testController},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, h.New(t))
		})
	}
	t.Run("Lease", func(t *testing.T) {
		if h.SharedLease {
			testLeaseShared(t, h.New(t))
		} else {
			testLeaseAlways(t, h.New(t))
		}
	})
	if h.Reopen != nil {
		t.Run("Persistence", func(t *testing.T) { testPersistence(t, h) })
	}
}

var ctx = context.Background()

const public = admission.PublicLane

// NewEventID returns a fresh event id so tests never share state.
func NewEventID() string {
	var b [6]byte
	crand.Read(b[:])
	return "ev-" + hex.EncodeToString(b[:])
}

func ids(n int) []admission.VisitorID {
	out := make([]admission.VisitorID, n)
	for i := range out {
		out[i] = admission.NewVisitorID()
	}
	return out
}

func seed(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

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

func draw(tranche int, first, count uint64, s []byte) admission.Draw {
	return admission.Draw{Tranche: tranche, Seed: s, First: first, Count: count, At: time.Now()}
}

func record(t *testing.T, s admission.Store, ev, lane string, d admission.Draw) {
	t.Helper()
	if err := s.RecordDraw(ctx, ev, lane, d); err != nil {
		t.Fatalf("RecordDraw(%s, %+v): %v", lane, d, err)
	}
}

func wantConflict(t *testing.T, s admission.Store, ev, lane string, d admission.Draw) {
	t.Helper()
	if err := s.RecordDraw(ctx, ev, lane, d); !errors.Is(err, admission.ErrDrawConflict) {
		t.Fatalf("RecordDraw(%s, tranche %d first %d) = %v, want ErrDrawConflict", lane, d.Tranche, d.First, err)
	}
}

func sameDraws(a, b []admission.Draw) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Tranche != y.Tranche || !bytes.Equal(x.Seed, y.Seed) || x.First != y.First || x.Count != y.Count || !x.At.Equal(y.At) {
			return false
		}
	}
	return true
}

func wantDraws(t *testing.T, s admission.Store, ev, lane string, after int, want ...admission.Draw) {
	t.Helper()
	got, err := s.Draws(ctx, ev, lane, after)
	check(t, err)
	if !sameDraws(got, want) {
		t.Fatalf("Draws(%s, after %d) = %+v, want %+v", lane, after, got, want)
	}
}

func serving(t *testing.T, s admission.Store, ev string) map[string]uint64 {
	t.Helper()
	m, err := s.Serving(ctx, ev)
	check(t, err)
	return m
}

func advance(t *testing.T, s admission.Store, ev, lane string, to, want uint64) {
	t.Helper()
	got, err := s.Advance(ctx, ev, lane, to)
	check(t, err)
	if got != want {
		t.Fatalf("Advance(%s, %d) = %d, want %d", lane, to, got, want)
	}
}

func claimed(t *testing.T, s admission.Store, ev, lane string, from, to uint64) []bool {
	t.Helper()
	got, err := s.Claimed(ctx, ev, lane, from, to)
	check(t, err)
	return got
}

// bits renders claims as "1" and "0", for short messages.
func bits(b []bool) string {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = '0'
		if c {
			out[i] = '1'
		}
	}
	return string(out)
}

func useInvite(t *testing.T, s admission.Store, ev, code string, forget time.Time) bool {
	t.Helper()
	first, err := s.UseInvite(ctx, ev, code, forget)
	check(t, err)
	return first
}

func lease(t *testing.T, s admission.Store, ev, holder string, ttl time.Duration) bool {
	t.Helper()
	ok, err := s.Lease(ctx, ev, holder, ttl)
	check(t, err)
	return ok
}

// testEmpty: reads of what was never written answer "nothing", not an
// error.
func testEmpty(t *testing.T, s admission.Store) {
	ev := NewEventID()
	wantMembers(t, s, ev, public, 0, nil)
	wantDraws(t, s, ev, public, -1)
	if m := serving(t, s, ev); len(m) != 0 {
		t.Fatalf("Serving of a new event = %v", m)
	}
	if c := claimed(t, s, ev, public, 1, 20); len(c) != 20 || slices.Contains(c, true) {
		t.Fatalf("Claimed of a new event = %s", bits(c))
	}
	r, err := s.Revocations(ctx, ev)
	check(t, err)
	if len(r) != 0 {
		t.Fatalf("Revocations of a new event = %v", r)
	}
	if b, err := s.VisitorBars(ctx, ev); err != nil || len(b) != 0 {
		t.Fatalf("VisitorBars of a new event = %v, %v", b, err)
	}
	c, err := s.Control(ctx, ev)
	check(t, err)
	if !reflect.DeepEqual(c, admission.Control{}) {
		t.Fatalf("Control of a new event = %+v", c)
	}
	st, err := s.LoadController(ctx, ev)
	check(t, err)
	if st != nil {
		t.Fatalf("LoadController of a new event = %q, want nil", st)
	}
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

// testSeed: the first writer wins, per lane and tranche, and the stored
// seed is nobody's alias.
func testSeed(t *testing.T, s admission.Store) {
	ev, other := NewEventID(), NewEventID()
	a, b := seed(1), seed(2)
	got, err := s.Seed(ctx, ev, public, 0, a)
	check(t, err)
	if !bytes.Equal(got, seed(1)) {
		t.Fatalf("first Seed = %x, want the proposal", got)
	}
	a[0], got[1] = 9, 9 // neither the proposal nor the answer is the stored seed
	for range 2 {
		got, err = s.Seed(ctx, ev, public, 0, b)
		check(t, err)
		if !bytes.Equal(got, seed(1)) {
			t.Fatalf("second Seed = %x, want the first proposal", got)
		}
	}
	for _, k := range []struct {
		ev, lane string
		tranche  int
	}{{ev, public, 1}, {ev, "presale", 0}, {other, public, 0}} {
		got, err := s.Seed(ctx, k.ev, k.lane, k.tranche, seed(3))
		check(t, err)
		if !bytes.Equal(got, seed(3)) {
			t.Fatalf("Seed(%s, %d) of another tranche = %x, want its own proposal", k.lane, k.tranche, got)
		}
	}
}

// testSeedConcurrent: replicas racing to seed one tranche all get the
// same seed, one of the proposals.
func testSeedConcurrent(t *testing.T, s admission.Store) {
	ev := NewEventID()
	const n = 20
	got := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = s.Seed(ctx, ev, public, 4, seed(byte(i+1))) })
	}
	wg.Wait()
	for i := range n {
		check(t, errs[i])
		if !bytes.Equal(got[i], got[0]) {
			t.Fatalf("proposer %d got %x, proposer 0 got %x", i, got[i], got[0])
		}
	}
	if w := got[0][0]; w < 1 || w > n || !bytes.Equal(got[0], seed(w)) {
		t.Fatalf("the winning seed %x is none of the proposals", got[0])
	}
}

// testRecordDrawFirst: a lane's first draw starts at number 1, whatever
// its tranche.
func testRecordDrawFirst(t *testing.T, s admission.Store) {
	ev := NewEventID()
	wantConflict(t, s, ev, public, draw(0, 0, 3, seed(1)))
	wantConflict(t, s, ev, public, draw(0, 2, 3, seed(1)))
	wantDraws(t, s, ev, public, -1)
	d := draw(2, 1, 3, seed(1)) // tranches 0 and 1 were empty
	record(t, s, ev, public, d)
	wantDraws(t, s, ev, public, -1, d)
	// Each lane and event numbers from 1.
	record(t, s, ev, "presale", draw(0, 1, 5, seed(2)))
	record(t, s, NewEventID(), public, draw(0, 1, 5, seed(2)))
}

// testRecordDrawSequence: each draw follows the lane's last one: a later
// tranche (gaps allowed) and First = last.Next().
func testRecordDrawSequence(t *testing.T, s admission.Store) {
	ev := NewEventID()
	d0 := draw(0, 1, 10, seed(1))
	record(t, s, ev, public, d0)
	d1 := draw(1, 11, 4, seed(2))
	record(t, s, ev, public, d1)
	wantConflict(t, s, ev, public, draw(3, 14, 1, seed(3))) // First is one short
	wantConflict(t, s, ev, public, draw(3, 16, 1, seed(3))) // a gap in the numbers
	wantConflict(t, s, ev, public, draw(3, 1, 1, seed(3)))  // numbers reused
	d4 := draw(4, 15, 2, seed(4))                           // tranches 2 and 3 were empty
	record(t, s, ev, public, d4)
	wantConflict(t, s, ev, public, draw(2, 17, 1, seed(5))) // an earlier tranche
	wantConflict(t, s, ev, public, draw(3, 17, 1, seed(5))) // still an earlier tranche
	d9 := draw(9, 17, 0, seed(6))                           // an empty draw keeps the numbering
	record(t, s, ev, public, d9)
	d10 := draw(10, 17, 1, seed(7))
	record(t, s, ev, public, d10)
	wantDraws(t, s, ev, public, -1, d0, d1, d4, d9, d10)
	// Another lane's numbers are its own.
	record(t, s, ev, "presale", draw(5, 1, 1, seed(8)))
	wantConflict(t, s, ev, "presale", draw(6, 18, 1, seed(8)))
}

// testRecordDrawIdentical: recording a stored draw again succeeds (a new
// leader repeating the old one's last step); a different draw of a drawn
// tranche does not.
func testRecordDrawIdentical(t *testing.T, s admission.Store) {
	ev := NewEventID()
	d0 := draw(0, 1, 10, seed(1))
	d2 := draw(2, 11, 5, seed(2))
	record(t, s, ev, public, d0)
	record(t, s, ev, public, d2)
	record(t, s, ev, public, d2)
	record(t, s, ev, public, d0) // an older one too
	again := d2
	again.Seed = slices.Clone(d2.Seed)
	again.At = d2.At.In(time.FixedZone("elsewhere", 3600)) // the same instant
	record(t, s, ev, public, again)
	for _, bad := range []admission.Draw{
		{Tranche: 2, Seed: seed(9), First: 11, Count: 5, At: d2.At},
		{Tranche: 2, Seed: d2.Seed, First: 11, Count: 6, At: d2.At},
		{Tranche: 2, Seed: d2.Seed, First: 11, Count: 5, At: d2.At.Add(time.Second)},
		{Tranche: 0, Seed: d0.Seed, First: 1, Count: 9, At: d0.At},
	} {
		wantConflict(t, s, ev, public, bad)
	}
	wantDraws(t, s, ev, public, -1, d0, d2)
}

// testRecordDrawConcurrent: two replicas drawing the same tranche
// differently: one draw is stored, everyone proposing it succeeds, the
// others get ErrDrawConflict.
func testRecordDrawConcurrent(t *testing.T, s admission.Store) {
	ev := NewEventID()
	variants := []admission.Draw{draw(0, 1, 7, seed(1)), draw(0, 1, 7, seed(2))}
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = s.RecordDraw(ctx, ev, public, variants[i%2]) })
	}
	wg.Wait()
	got, err := s.Draws(ctx, ev, public, -1)
	check(t, err)
	if len(got) != 1 {
		t.Fatalf("%d draws stored, want 1", len(got))
	}
	won := 0
	if bytes.Equal(got[0].Seed, variants[1].Seed) {
		won = 1
	}
	for i, err := range errs {
		if i%2 == won && err != nil {
			t.Fatalf("proposer %d of the stored draw: %v", i, err)
		}
		if i%2 != won && !errors.Is(err, admission.ErrDrawConflict) {
			t.Fatalf("proposer %d of the other draw: %v, want ErrDrawConflict", i, err)
		}
	}
}

// testDraws: Draws(after) lists the draws of tranches after `after`, in
// order, per lane and event, with every field kept.
func testDraws(t *testing.T, s admission.Store) {
	ev := NewEventID()
	d0 := admission.Draw{Tranche: 0, Seed: seed(1), First: 1, Count: 3, At: time.Date(2030, 5, 1, 10, 0, 0, 123456789, time.UTC)}
	d3 := admission.Draw{Tranche: 3, Seed: []byte("a seed of another length"), First: 4, Count: 1 << 40, At: time.Now()}
	d7 := admission.Draw{Tranche: 7, Seed: seed(3), First: 4 + 1<<40, Count: 2, At: time.Now().Add(time.Minute)}
	for _, d := range []admission.Draw{d0, d3, d7} {
		record(t, s, ev, public, d)
	}
	p0 := draw(1, 1, 1, seed(4))
	record(t, s, ev, "presale", p0)
	wantDraws(t, s, ev, public, -1, d0, d3, d7)
	wantDraws(t, s, ev, public, 0, d3, d7)
	wantDraws(t, s, ev, public, 2, d3, d7)
	wantDraws(t, s, ev, public, 3, d7)
	wantDraws(t, s, ev, public, 7)
	wantDraws(t, s, ev, public, 100)
	wantDraws(t, s, ev, "presale", -1, p0)
	wantDraws(t, s, ev, "other", -1)
	wantDraws(t, s, NewEventID(), public, -1)
	got, err := s.Draws(ctx, ev, public, -1)
	check(t, err)
	if got[0].Next() != 4 || got[2].Next() != 6+1<<40 {
		t.Fatalf("Next of the stored draws: %d, %d", got[0].Next(), got[2].Next())
	}
	got[0].Seed[0] = 99 // the caller's copy
	wantDraws(t, s, ev, public, -1, d0, d3, d7)
}

// testAdvance: the serving counter only goes up; Advance answers its
// value.
func testAdvance(t *testing.T, s admission.Store) {
	ev := NewEventID()
	advance(t, s, ev, public, 0, 0)
	advance(t, s, ev, public, 5, 5)
	advance(t, s, ev, public, 3, 5)
	advance(t, s, ev, public, 5, 5)
	advance(t, s, ev, public, 6, 6)
	advance(t, s, ev, public, 1<<62+1, 1<<62+1) // exact beyond float64 precision
	advance(t, s, ev, public, 1<<62, 1<<62+1)
	advance(t, s, ev, "presale", 2, 2)
	advance(t, s, NewEventID(), public, 1, 1)
	if m := serving(t, s, ev); !reflect.DeepEqual(m, map[string]uint64{public: 1<<62 + 1, "presale": 2}) {
		t.Fatalf("Serving = %v", m)
	}
}

// testAdvanceConcurrent: concurrent advances end at the largest.
func testAdvanceConcurrent(t *testing.T, s admission.Store) {
	ev := NewEventID()
	const n, each = 20, 10
	tos := rand.Perm(n * each)
	var wg sync.WaitGroup
	errs := make(chan error, n*each)
	for g := range n {
		wg.Go(func() {
			for _, to := range tos[g*each : (g+1)*each] {
				got, err := s.Advance(ctx, ev, public, uint64(to+1))
				if err == nil && got < uint64(to+1) {
					err = fmt.Errorf("Advance(%d) = %d", to+1, got)
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if m := serving(t, s, ev); m[public] != n*each {
		t.Fatalf("serving after concurrent advances = %d, want %d", m[public], n*each)
	}
}

// testServing: every lane's counter, and nothing for lanes never
// advanced.
func testServing(t *testing.T, s admission.Store) {
	ev := NewEventID()
	if m := serving(t, s, ev); len(m) != 0 {
		t.Fatalf("Serving of a new event = %v", m)
	}
	advance(t, s, ev, "a", 3, 3)
	advance(t, s, ev, "b", 7, 7)
	advance(t, s, ev, "c", 0, 0)
	m := serving(t, s, ev)
	if m["a"] != 3 || m["b"] != 7 || m["c"] != 0 || m[public] != 0 {
		t.Fatalf("Serving = %v", m)
	}
	for lane, n := range m {
		if lane != "a" && lane != "b" && n != 0 {
			t.Fatalf("Serving has lane %q = %d", lane, n)
		}
	}
	m["a"] = 100 // the caller's copy
	if m := serving(t, s, ev); m["a"] != 3 {
		t.Fatalf("Serving after changing a returned map = %v", m)
	}
}

// testClaims: Claim marks a number, Claimed reports ranges, per lane and
// event; claiming twice is harmless.
func testClaims(t *testing.T, s admission.Store) {
	ev := NewEventID()
	for _, n := range []uint64{1, 3, 7, 8, 9, 16, 3} {
		check(t, s.Claim(ctx, ev, public, n))
	}
	check(t, s.Claim(ctx, ev, "presale", 2))
	check(t, s.Claim(ctx, NewEventID(), public, 5))
	if got := bits(claimed(t, s, ev, public, 1, 17)); got != "10100011100000010" {
		t.Fatalf("Claimed(1, 17) = %s", got)
	}
	if got := bits(claimed(t, s, ev, "presale", 1, 4)); got != "0100" {
		t.Fatalf("presale Claimed(1, 4) = %s", got)
	}
	if got := bits(claimed(t, s, ev, "other", 1, 4)); got != "0000" {
		t.Fatalf("unclaimed lane Claimed(1, 4) = %s", got)
	}
	if got := bits(claimed(t, s, ev, public, 5, 5)); got != "0" {
		t.Fatalf("Claimed(5, 5) = %s", got)
	}
}

// testClaimedRanges: any range, within and beyond the claimed numbers,
// has one entry per number; from > to has none.
func testClaimedRanges(t *testing.T, s admission.Store) {
	ev := NewEventID()
	r := rand.New(rand.NewPCG(1, 2))
	want := make([]bool, 3000)
	for range 400 {
		n := 1 + r.IntN(2000)
		want[n] = true
		check(t, s.Claim(ctx, ev, public, uint64(n)))
	}
	for _, rg := range [][2]uint64{{0, 2999}, {1, 1}, {0, 0}, {2000, 2000}, {1999, 2999}, {8, 15}, {9, 17},
		{123, 1234}, {2001, 2999}, {5000, 5100}, {1 << 33, 1<<33 + 9}} {
		got := claimed(t, s, ev, public, rg[0], rg[1])
		if uint64(len(got)) != rg[1]-rg[0]+1 {
			t.Fatalf("Claimed(%d, %d) has %d entries", rg[0], rg[1], len(got))
		}
		for i, c := range got {
			n := rg[0] + uint64(i)
			if c != (n < uint64(len(want)) && want[n]) {
				t.Fatalf("Claimed(%d, %d)[%d]: number %d claimed = %v", rg[0], rg[1], i, n, c)
			}
		}
	}
	for _, rg := range [][2]uint64{{5, 4}, {100, 1}} {
		if got := claimed(t, s, ev, public, rg[0], rg[1]); len(got) != 0 {
			t.Fatalf("Claimed(%d, %d) = %s, want nothing", rg[0], rg[1], bits(got))
		}
	}
}

func revocations(t *testing.T, s admission.Store, ev string) map[string]time.Time {
	t.Helper()
	r, err := s.Revocations(ctx, ev)
	check(t, err)
	return r
}

// near: stores keep revocation times to the millisecond.
func near(a, b time.Time) bool { return a.Sub(b).Abs() < time.Millisecond }

// testRevocations: Revoke bars a pass until a time; Revocations lists the
// bars in force, per event.
func testRevocations(t *testing.T, s admission.Store) {
	ev := NewEventID()
	hour := time.Now().Add(time.Hour)
	check(t, s.Revoke(ctx, ev, "pass-1", hour))
	check(t, s.Revoke(ctx, ev, "pass-2", hour.Add(time.Minute)))
	check(t, s.Revoke(ctx, ev, "pass-3", time.Now().Add(-time.Second))) // already over
	check(t, s.Revoke(ctx, NewEventID(), "pass-4", hour))
	r := revocations(t, s, ev)
	if len(r) != 2 || !near(r["pass-1"], hour) || !near(r["pass-2"], hour.Add(time.Minute)) {
		t.Fatalf("Revocations = %v", r)
	}
	// Revoking again for longer extends the bar.
	check(t, s.Revoke(ctx, ev, "pass-1", hour.Add(time.Hour)))
	if r := revocations(t, s, ev); !near(r["pass-1"], hour.Add(time.Hour)) {
		t.Fatalf("after extending: %v", r)
	}
}

// testRevocationsExpire: a bar whose time is over is no longer listed.
func testRevocationsExpire(t *testing.T, s admission.Store) {
	ev := NewEventID()
	check(t, s.Revoke(ctx, ev, "short", time.Now().Add(300*time.Millisecond)))
	check(t, s.Revoke(ctx, ev, "long", time.Now().Add(time.Hour)))
	time.Sleep(600 * time.Millisecond)
	r := revocations(t, s, ev)
	if _, ok := r["short"]; ok || len(r) != 1 {
		t.Fatalf("Revocations after the short bar ran out = %v", r)
	}
}

// bars returns an event's visitor bars by visitor, checking there is one
// per visitor.
func bars(t *testing.T, s admission.Store, ev string) map[admission.VisitorID]admission.VisitorBar {
	t.Helper()
	list, err := s.VisitorBars(ctx, ev)
	check(t, err)
	out := map[admission.VisitorID]admission.VisitorBar{}
	for _, b := range list {
		if _, dup := out[b.Visitor]; dup {
			t.Fatalf("VisitorBars lists %s twice", b.Visitor)
		}
		out[b.Visitor] = b
	}
	return out
}

func wantBar(t *testing.T, got admission.VisitorBar, from, until time.Time, reason admission.BarReason) {
	t.Helper()
	if !near(got.From, from) || !near(got.Until, until) || got.Reason != reason {
		t.Fatalf("bar = from %v until %v %s, want from %v until %v %s", got.From, got.Until, got.Reason, from, until, reason)
	}
}

// testVisitorBars: bars round-trip per event, merge per visitor (earlier
// from, later until, revoked over completed), and a bar already over is
// not recorded.
func testVisitorBars(t *testing.T, s admission.Store) {
	ev := NewEventID()
	v := ids(4)
	now := time.Now()
	hour := now.Add(time.Hour)
	check(t, s.BarVisitors(ctx, ev, []admission.VisitorBar{
		{Visitor: v[0], From: now, Until: hour, Reason: admission.BarRevoked},
		{Visitor: v[1], From: now.Add(30 * time.Second), Until: hour, Reason: admission.BarCompleted},
		{Visitor: v[2], From: now, Until: now.Add(-time.Second), Reason: admission.BarRevoked}, // already over
	}))
	check(t, s.BarVisitors(ctx, NewEventID(), []admission.VisitorBar{{Visitor: v[3], From: now, Until: hour, Reason: admission.BarRevoked}}))
	check(t, s.BarVisitors(ctx, ev, nil))
	b := bars(t, s, ev)
	if len(b) != 2 {
		t.Fatalf("VisitorBars = %v, want 2 bars", b)
	}
	wantBar(t, b[v[0]], now, hour, admission.BarRevoked)
	wantBar(t, b[v[1]], now.Add(30*time.Second), hour, admission.BarCompleted)

	// Barring again merges: a revocation of a completed visitor starts at
	// once and says revoked; a later completion of a revoked one changes
	// nothing but a later until.
	check(t, s.BarVisitors(ctx, ev, []admission.VisitorBar{
		{Visitor: v[1], From: now.Add(time.Second), Until: now.Add(time.Minute), Reason: admission.BarRevoked},
		{Visitor: v[0], From: now.Add(time.Minute), Until: hour.Add(time.Hour), Reason: admission.BarCompleted},
	}))
	b = bars(t, s, ev)
	wantBar(t, b[v[0]], now, hour.Add(time.Hour), admission.BarRevoked)
	wantBar(t, b[v[1]], now.Add(time.Second), hour, admission.BarRevoked)

	if err := s.BarVisitors(ctx, ev, []admission.VisitorBar{{Visitor: v[2], From: now, Until: hour, Reason: "because"}}); err == nil {
		t.Fatal("BarVisitors took an unknown reason")
	}
}

// testVisitorBarsExpire: a bar whose until is over is no longer listed.
func testVisitorBarsExpire(t *testing.T, s admission.Store) {
	ev := NewEventID()
	v := ids(2)
	now := time.Now()
	check(t, s.BarVisitors(ctx, ev, []admission.VisitorBar{
		{Visitor: v[0], From: now, Until: now.Add(300 * time.Millisecond), Reason: admission.BarCompleted},
		{Visitor: v[1], From: now, Until: now.Add(time.Hour), Reason: admission.BarRevoked},
	}))
	time.Sleep(600 * time.Millisecond)
	b := bars(t, s, ev)
	if _, ok := b[v[0]]; ok || len(b) != 1 {
		t.Fatalf("VisitorBars after the short bar ran out = %v", b)
	}
}

// testInvites: an invite's first use says so, later ones don't, per code
// and event.
func testInvites(t *testing.T, s admission.Store) {
	ev := NewEventID()
	forget := time.Now().Add(time.Hour)
	if !useInvite(t, s, ev, "code-1", forget) {
		t.Fatal("first use of code-1 is not first")
	}
	for range 2 {
		if useInvite(t, s, ev, "code-1", forget) {
			t.Fatal("second use of code-1 is first")
		}
	}
	if !useInvite(t, s, ev, "code-2", forget) {
		t.Fatal("code-2's first use is not first")
	}
	if !useInvite(t, s, NewEventID(), "code-1", forget) {
		t.Fatal("code-1 in another event is not first")
	}
	// A short memory still lasts until forget.
	if !useInvite(t, s, ev, "code-3", time.Now().Add(time.Hour+time.Minute)) || useInvite(t, s, ev, "code-3", forget) {
		t.Fatal("code-3 is not single use")
	}
}

// testInvitesConcurrent: of many concurrent uses of one code, exactly one
// is first.
func testInvitesConcurrent(t *testing.T, s admission.Store) {
	ev := NewEventID()
	const n = 20
	firsts := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { firsts[i], errs[i] = s.UseInvite(ctx, ev, "shared", time.Now().Add(time.Hour)) })
	}
	wg.Wait()
	count := 0
	for i := range n {
		check(t, errs[i])
		if firsts[i] {
			count++
		}
	}
	if count != 1 {
		t.Fatalf("%d of %d concurrent uses were first", count, n)
	}
}

// testControl: an operator's overrides round-trip, per event.
func testControl(t *testing.T, s admission.Store) {
	ev := NewEventID()
	for _, c := range []admission.Control{
		{Paused: true},
		{Closed: true, SoldOut: true, Caps: &admission.Caps{MaxActive: 500, MaxNewPerMinute: 60}},
		{Caps: &admission.Caps{}},
		{},
	} {
		check(t, s.SetControl(ctx, ev, c))
		got, err := s.Control(ctx, ev)
		check(t, err)
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("Control = %+v (caps %+v), want %+v (caps %+v)", got, got.Caps, c, c.Caps)
		}
	}
	caps := &admission.Caps{MaxActive: 1}
	check(t, s.SetControl(ctx, ev, admission.Control{Caps: caps}))
	caps.MaxActive = 2 // the store keeps its own copy
	if got, _ := s.Control(ctx, ev); got.Caps == nil || got.Caps.MaxActive != 1 {
		t.Fatalf("Control after changing the caller's caps = %+v", got.Caps)
	}
	if got, _ := s.Control(ctx, NewEventID()); !reflect.DeepEqual(got, admission.Control{}) {
		t.Fatalf("another event's Control = %+v", got)
	}
}

// testController: the controller's state round-trips, per event.
func testController(t *testing.T, s admission.Store) {
	ev := NewEventID()
	state := []byte(`{"limit":120,"last_decrease":"2030-01-01T00:00:00Z"}` + "\x00\xff binary too")
	check(t, s.SaveController(ctx, ev, state))
	got, err := s.LoadController(ctx, ev)
	check(t, err)
	if !bytes.Equal(got, state) {
		t.Fatalf("LoadController = %q", got)
	}
	state[0], got[1] = 'x', 'x' // neither is the stored state
	got, _ = s.LoadController(ctx, ev)
	if got[0] != '{' || got[1] != '"' {
		t.Fatalf("stored state changed through a caller's slice: %q", got)
	}
	check(t, s.SaveController(ctx, ev, []byte("v2")))
	if got, _ := s.LoadController(ctx, ev); string(got) != "v2" {
		t.Fatalf("LoadController after a second save = %q", got)
	}
	if got, _ := s.LoadController(ctx, NewEventID()); got != nil {
		t.Fatalf("another event's controller state = %q", got)
	}
}

// testLeaseAlways: an embedded store's one process always leads.
func testLeaseAlways(t *testing.T, s admission.Store) {
	ev := NewEventID()
	for _, holder := range []string{"a", "b", "a", "c"} {
		if !lease(t, s, ev, holder, time.Second) {
			t.Fatalf("Lease(%s) = false on a store that always leads", holder)
		}
	}
}

// testLeaseShared: one holder at a time, renewals keep the lease, and
// another holder takes over once the holder stops renewing. Only lower
// bounds of time are asserted: a lease held is only checked well within
// a long ttl, a takeover only after sleeping past the ttl.
func testLeaseShared(t *testing.T, s admission.Store) {
	const long, short = time.Minute, 300 * time.Millisecond
	ev, ev2 := NewEventID(), NewEventID()
	if !lease(t, s, ev, "a", long) {
		t.Fatal("a cannot take a free lease")
	}
	if !lease(t, s, ev, "a", long) {
		t.Fatal("a cannot renew its lease")
	}
	if lease(t, s, ev, "b", long) {
		t.Fatal("b leads while a holds the lease")
	}
	if !lease(t, s, ev2, "b", long) {
		t.Fatal("b cannot lead another event")
	}

	// A renewal extends the lease: a short lease renewed for long holds
	// past the short ttl.
	ev3 := NewEventID()
	if !lease(t, s, ev3, "a", short) || !lease(t, s, ev3, "a", long) {
		t.Fatal("a cannot take and renew ev3")
	}
	time.Sleep(2 * short)
	if lease(t, s, ev3, "b", long) {
		t.Fatal("b took over a renewed lease")
	}

	// A holder that stops renewing loses the lease after its ttl.
	ev4 := NewEventID()
	if !lease(t, s, ev4, "a", short) {
		t.Fatal("a cannot take ev4")
	}
	time.Sleep(2 * short)
	if !lease(t, s, ev4, "b", long) {
		t.Fatal("b did not take over after a's lease ran out")
	}
	if lease(t, s, ev4, "a", long) {
		t.Fatal("a leads again while b holds the lease")
	}

	// A holder whose lease ran out can take it again when nobody else did.
	ev5 := NewEventID()
	if !lease(t, s, ev5, "a", short) {
		t.Fatal("a cannot take ev5")
	}
	time.Sleep(2 * short)
	if !lease(t, s, ev5, "a", long) {
		t.Fatal("a cannot take back its own expired lease")
	}
}

// testPersistence: everything durable survives Reopen; claims and the
// controller state too, since Reopen closes the store first.
func testPersistence(t *testing.T, h Harness) {
	s := h.New(t)
	ev := NewEventID()
	v := ids(6)
	appendAll(t, s, ev, public, 0, v[0], v[1], v[0])
	appendAll(t, s, ev, public, 2, v[2])
	appendAll(t, s, ev, "presale", 0, v[3])
	seedP, err := s.Seed(ctx, ev, public, 0, seed(1))
	check(t, err)
	seedS, err := s.Seed(ctx, ev, "presale", 0, seed(2))
	check(t, err)
	d0 := draw(0, 1, 2, seedP)
	record(t, s, ev, public, d0)
	p0 := draw(0, 1, 1, seedS)
	record(t, s, ev, "presale", p0)
	advance(t, s, ev, public, 2, 2)
	advance(t, s, ev, "presale", 1, 1)
	check(t, s.Claim(ctx, ev, public, 1))
	check(t, s.Claim(ctx, ev, public, 2))
	check(t, s.Claim(ctx, ev, "presale", 1))
	until := time.Now().Add(time.Hour)
	check(t, s.Revoke(ctx, ev, "pass-1", until))
	now := time.Now()
	check(t, s.BarVisitors(ctx, ev, []admission.VisitorBar{
		{Visitor: v[5], From: now.Add(30 * time.Second), Until: until, Reason: admission.BarCompleted},
		{Visitor: v[4], From: now, Until: until, Reason: admission.BarRevoked}}))
	if !useInvite(t, s, ev, "code-1", time.Now().Add(time.Hour)) {
		t.Fatal("first use is not first")
	}
	ctl := admission.Control{Paused: true, Caps: &admission.Caps{MaxActive: 5}}
	check(t, s.SetControl(ctx, ev, ctl))
	check(t, s.SaveController(ctx, ev, []byte("controller state")))

	s = h.Reopen(t, s)

	wantMembers(t, s, ev, public, 0, []admission.VisitorID{v[0], v[1], v[0]})
	wantMembers(t, s, ev, public, 2, v[2:3])
	wantMembers(t, s, ev, "presale", 0, v[3:4])
	if got, err := s.Seed(ctx, ev, public, 0, seed(9)); err != nil || !bytes.Equal(got, seedP) {
		t.Fatalf("seed after reopen = %x, %v", got, err)
	}
	if got, err := s.Seed(ctx, ev, "presale", 0, seed(9)); err != nil || !bytes.Equal(got, seedS) {
		t.Fatalf("presale seed after reopen = %x, %v", got, err)
	}
	wantDraws(t, s, ev, public, -1, d0)
	wantDraws(t, s, ev, "presale", -1, p0)
	if m := serving(t, s, ev); m[public] != 2 || m["presale"] != 1 {
		t.Fatalf("Serving after reopen = %v", m)
	}
	if got := bits(claimed(t, s, ev, public, 1, 3)); got != "110" {
		t.Fatalf("Claimed after reopen = %s", got)
	}
	if got := bits(claimed(t, s, ev, "presale", 1, 2)); got != "10" {
		t.Fatalf("presale Claimed after reopen = %s", got)
	}
	if r := revocations(t, s, ev); len(r) != 1 || !near(r["pass-1"], until) {
		t.Fatalf("Revocations after reopen = %v", r)
	}
	if b := bars(t, s, ev); len(b) != 2 {
		t.Fatalf("VisitorBars after reopen = %v", b)
	} else {
		wantBar(t, b[v[5]], now.Add(30*time.Second), until, admission.BarCompleted)
		wantBar(t, b[v[4]], now, until, admission.BarRevoked)
	}
	if useInvite(t, s, ev, "code-1", time.Now().Add(time.Hour)) {
		t.Fatal("an invite used before the reopen is first again")
	}
	if got, err := s.Control(ctx, ev); err != nil || !reflect.DeepEqual(got, ctl) {
		t.Fatalf("Control after reopen = %+v, %v", got, err)
	}
	if got, err := s.LoadController(ctx, ev); err != nil || string(got) != "controller state" {
		t.Fatalf("LoadController after reopen = %q, %v", got, err)
	}

	// And the store carries on from there.
	appendAll(t, s, ev, public, 2, v[4])
	wantMembers(t, s, ev, public, 2, []admission.VisitorID{v[2], v[4]})
	wantConflict(t, s, ev, public, draw(2, 1, 2, seed(3)))
	record(t, s, ev, public, draw(2, 3, 2, seed(3)))
	record(t, s, ev, public, d0)
	advance(t, s, ev, public, 1, 2)
	advance(t, s, ev, public, 4, 4)
	check(t, s.Claim(ctx, ev, public, 3))
	if got := bits(claimed(t, s, ev, public, 1, 3)); got != "111" {
		t.Fatalf("Claimed after a claim after reopen = %s", got)
	}
}
