// The persistence case: what a store has acknowledged survives Reopen.

package admissiontest

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// testPersistence: everything durable survives Reopen; claims, pass uses
// and the controller state too, since Reopen closes the store first.
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
	check(t, s.MarkUsed(ctx, ev, public, []uint64{2, 3}))
	check(t, s.MarkUsed(ctx, ev, "presale", []uint64{1}))
	until := time.Now().Add(time.Hour)
	check(t, s.Revoke(ctx, ev, "pass-1", until))
	now := time.Now()
	check(t, s.BarVisitors(ctx, ev, []admission.VisitorBar{
		{Visitor: v[5], From: now.Add(30 * time.Second), Until: until, Reason: admission.BarCompleted},
		{Visitor: v[4], From: now, Until: until, Reason: admission.BarRevoked}}))
	if !useInvite(t, s, ev, "code-1", time.Now().Add(time.Hour)) {
		t.Fatal("first use is not first")
	}
	acct := place(v[1], "presale", 0)
	placeAccount(t, s, ev, "acct-1", acct, time.Now().Add(time.Hour))
	ctl := admission.Control{Paused: true, Caps: &admission.Caps{MaxActive: 5}}
	check(t, s.SetControl(ctx, ev, ctl))
	check(t, s.SaveController(ctx, ev, []byte("controller state")))
	minute := time.Date(2026, 5, 1, 19, 0, 0, 0, time.UTC)
	check(t, s.RecordMinute(ctx, ev, minute, []byte("first"), time.Hour))
	check(t, s.RecordMinute(ctx, ev, minute, []byte("minute 0"), time.Hour))
	check(t, s.RecordMinute(ctx, ev, minute.Add(time.Minute), []byte("minute 1"), time.Hour))

	if _, err := s.PutEventRecord(ctx, ev, []byte("made at run time"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutEventRecord(ctx, ev, []byte("changed at run time"), 1); err != nil {
		t.Fatal(err)
	}
	s = h.Reopen(t, s)
	if got := recordsOf(t, s, ev)[ev]; got.Revision != 2 || string(got.Body) != "changed at run time" {
		t.Fatalf("event record after reopen = %+v", got)
	}

	wantMinutes(t, s, ev, minute, minute.Add(time.Hour), "minute 0", "minute 1")

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
	if got := bits(used(t, s, ev, public, 1, 4)); got != "0110" {
		t.Fatalf("Used after reopen = %s", got)
	}
	if got := bits(used(t, s, ev, "presale", 1, 2)); got != "10" {
		t.Fatalf("presale Used after reopen = %s", got)
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
	if got, ok := accountPlace(t, s, ev, "acct-1"); !ok || !samePlace(got, acct) {
		t.Fatalf("AccountPlace after reopen = %+v, %v", got, ok)
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
	check(t, s.MarkUsed(ctx, ev, public, []uint64{1}))
	if got := bits(used(t, s, ev, public, 1, 4)); got != "1110" {
		t.Fatalf("Used after a use after reopen = %s", got)
	}
}
