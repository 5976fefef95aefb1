// Run, the suite's one entry point, and the helpers every group of cases
// shares. The cases sit by concern: members.go, draws.go (seeds and
// draws), serving.go (counters and claims), uses.go (pass uses),
// passes.go (revocations, bars, invites), accounts.go (accounts' places),
// control.go (control, controller state, lease), samples.go (the
// replicas' measurement records), minutes.go (the leader's minute
// records), records.go (event records), once.go (one-time values, for
// the stores that spend them) and persistence.go.

package admissiontest

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"reflect"
	"slices"
	"testing"

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
		{"Uses", testUses},
		{"UsedRanges", testUsedRanges},
		{"UsesRefused", testUsesRefused},
		{"UsesConcurrent", testUsesConcurrent},
		{"Revocations", testRevocations},
		{"RevocationsExpire", testRevocationsExpire},
		{"VisitorBars", testVisitorBars},
		{"VisitorBarsExpire", testVisitorBarsExpire},
		{"Invites", testInvites},
		{"InvitesConcurrent", testInvitesConcurrent},
		{"Accounts", testAccounts},
		{"AccountsConcurrent", testAccountsConcurrent},
		{"AccountsExpire", testAccountsExpire},
		{"AccountsLinearizable", testAccountsLinearizable},
		{"Control", testControl},
		{"Controller", testController},
		{"Slots", testSlots},
		{"SlotsConcurrent", testSlotsConcurrent},
		{"SlotsExpire", testSlotsExpire},
		{"Samples", testSamples},
		{"SamplesExpire", testSamplesExpire},
		{"SamplesConcurrent", testSamplesConcurrent},
		{"Minutes", testMinutes},
		{"MinutesExpire", testMinutesExpire},
		{"MinutesConcurrent", testMinutesConcurrent},
		{"EventRecords", testEventRecords},
		{"EventRecordsConcurrent", testEventRecordsConcurrent},
		{"Once", testOnce},
		{"OnceExpire", testOnceExpire},
		{"OnceConcurrent", testOnceConcurrent},
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
	if u := used(t, s, ev, public, 1, 20); slices.Contains(u, true) {
		t.Fatalf("Used of a new event = %s", bits(u))
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
