package redisstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/admissiontest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// tornCases are the admission changes that reach the AOF as a MULTI/EXEC
// block (RecordDraw: ZADD, SET; BarVisitors: HSET and ZADD per visitor),
// each with what is acknowledged between the restart after the tear and
// the next crash. Joins (APPEND), Advance (HSET) and Seed (SET NX) are
// one command each, and so is Revoke (ZADD) unless it first prunes
// revocations that ran out, which a torn prefix may do harmlessly: a
// kill that tears one of them costs it whole with either
// aof-load-truncated setting, so they are what happens in between, where
// a torn block left in the AOF can take them down with it.
var tornCases = []struct {
	name string
	// torn makes the change the kill tears; it is never acknowledged.
	torn func(r *tornRound) error
	// between makes acknowledged changes after the first restart.
	between func(r *tornRound) error
}{
	{"draw, drawn again after the crash",
		func(r *tornRound) error { return r.draw(1, false) },
		func(r *tornRound) error {
			// The engine draws the tranche again (same seed, members and
			// numbers, its own time) after the crash.
			return errors.Join(r.join(2, 2), r.advance(4), r.draw(1, true))
		}},
	{"draw, then only joins",
		func(r *tornRound) error { return r.draw(1, false) },
		func(r *tornRound) error { return errors.Join(r.join(2, 2), r.advance(4)) }},
	{"visitor bars",
		func(r *tornRound) error { return r.bar(false, 2) },
		func(r *tornRound) error { return errors.Join(r.join(2, 2), r.advance(4), r.bar(true, 1)) }},
}

// TestTornWrite kills Redis as it writes a change that reaches the AOF as
// one MULTI/EXEC block (a draw record, a batch of visitor bars), cuts the
// AOF in the middle of each command of the block in turn, as the kill
// can, and restarts twice with acknowledged changes in between (joins, a
// serving counter, the draw made again, another bar): after each restart
// the store must hold exactly what was acknowledged, the torn change gone
// whole, and its keys must agree with each other (the lane's last draw
// with its draw records, every bar with its expiry); at the end the lane
// must still draw its next tranche.
//
// The store requires aof-load-truncated no, and the torn AOF is repaired
// with redis-check-aof --fix, which cuts before the block's MULTI.
// TestTornWriteLoadTruncated shows what Redis's default does instead.
func TestTornWrite(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	for _, tc := range tornCases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			for k := 1; ; k++ {
				block, err := tornWrite(t, srv, false, k, tc.torn, tc.between)
				if err != nil {
					t.Fatalf("cut in command %d of %d of the block (%s):\n%v", k, len(block)-1, block[k].Args[0], err)
				}
				if k == len(block)-1 { // the cut was in EXEC
					t.Logf("cut in each of the %d commands of the block: the change is gone whole", k)
					return
				}
			}
		})
	}
}

// TestTornWriteLoadTruncated runs TestTornWrite's rounds on a Redis with
// its default aof-load-truncated yes, which the store refuses: Redis
// starts from the torn AOF by cutting it inside the block, appends after
// the block's first commands, and the next restart applies them with the
// next block (a tranche with two draw records and a last draw that
// matches neither, a bar without its expiry) or, when no block comes
// before the next crash, reverts to before the block's MULTI and drops
// the joins and serving counter acknowledged since. Each case must show
// at least one such failure: that is what the store's requirement is
// for, and it shows that TestTornWrite's checks see it.
func TestTornWriteLoadTruncated(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true, LoadTornAOF: true})
	for _, tc := range tornCases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			failed := 0
			for k := 1; ; k++ {
				block, err := tornWrite(t, srv, true, k, tc.torn, tc.between)
				if err != nil {
					failed++
					t.Logf("aof-load-truncated yes, cut in command %d of %d of the block (%s):\n%v", k, len(block)-1, block[k].Args[0], err)
				}
				if k == len(block)-1 {
					break
				}
			}
			if failed == 0 {
				t.Fatal("with aof-load-truncated yes every torn change was gone whole and every acknowledged one kept: " +
					"this Redis no longer keeps half a block, and the store's requirement of aof-load-truncated no may be relaxed")
			}
		})
	}
}

// tornWrite runs one round on a fresh event: acknowledged changes, the
// change torn at command k of its block, a restart, the changes in
// between, a crash and a restart. It returns the torn block and every
// way the store then differs from what was acknowledged. A server with
// aof-load-truncated no must need exactly one repair, at the first
// restart; loadTorn says the server runs with yes (LoadTornAOF).
func tornWrite(t *testing.T, srv *redistest.Server, loadTorn bool, k int, torn, between func(r *tornRound) error) ([]redistest.AOFCommand, error) {
	t.Helper()
	repair := !loadTorn
	r := &tornRound{ctx: context.Background(), ev: admissiontest.NewEventID(), require: repair,
		members: map[int][]admission.VisitorID{}, bars: map[admission.VisitorID]admission.VisitorBar{},
		now: time.UnixMilli(time.Now().UnixMilli())}
	r.open(t, srv)
	if err := errors.Join(r.join(0, 3), r.draw(0, true), r.advance(2), r.bar(true, 1), r.join(1, 2), torn(r)); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	block := srv.TearLastBlock(k)
	repairs := srv.AOFRepairs
	srv.Restart()
	if repair && srv.AOFRepairs != repairs+1 {
		t.Fatalf("cut in command %d of %v: Redis started from the torn AOF", k, block[k].Args[0])
	}
	r.open(t, srv)
	var errs []error
	if err := r.check(); err != nil {
		errs = append(errs, fmt.Errorf("after the restart that found the AOF torn: %w", err))
	}
	if err := between(r); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	srv.Restart()
	if srv.AOFRepairs != repairs+1 && repair {
		t.Fatalf("a plain crash after the repair left a torn AOF")
	}
	r.open(t, srv)
	if err := r.check(); err != nil {
		errs = append(errs, fmt.Errorf("after the next crash and restart: %w", err))
	}
	if err := r.draw(2, true); err != nil {
		errs = append(errs, fmt.Errorf("the lane cannot draw its next tranche: %w", err))
	}
	return block, errors.Join(errs...)
}

// tornRound is one event's acknowledged state in a torn-write round: the
// store must hold exactly this.
type tornRound struct {
	ctx     context.Context
	require bool // open the store with RequirePersistence
	s       *Store
	ev      string
	now     time.Time
	members map[int][]admission.VisitorID // the public lane's, by tranche
	draws   []admission.Draw              // the public lane's
	serving uint64                        // the public lane's
	bars    map[admission.VisitorID]admission.VisitorBar
}

const tornLane = admission.PublicLane

// open opens a store on the (restarted) server.
func (r *tornRound) open(t *testing.T, srv *redistest.Server) {
	t.Helper()
	s, err := New(r.ctx, Options{Client: srv.Client(), RequirePersistence: r.require,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r.s = s
}

// join appends n new visitors to the lane's tranche.
func (r *tornRound) join(tranche, n int) error {
	for range n {
		v := admission.NewVisitorID()
		if err := r.s.AppendMember(r.ctx, r.ev, tornLane, tranche, v); err != nil {
			return err
		}
		r.members[tranche] = append(r.members[tranche], v)
	}
	return nil
}

// draw records the draw of the lane's tranche that follows the
// acknowledged ones, at a time of its own (the engine's draw of a
// tranche again after a crash differs from the first in its time only);
// ack says whether the draw is acknowledged.
func (r *tornRound) draw(tranche int, ack bool) error {
	first := uint64(1)
	if n := len(r.draws); n > 0 {
		first = r.draws[n-1].Next()
	}
	d := admission.Draw{Tranche: tranche, Seed: bytes.Repeat([]byte{byte(tranche + 1)}, admission.SeedSize),
		First: first, Count: uint64(len(r.members[tranche])), At: r.now.Add(time.Duration(len(r.draws)+1) * time.Second)}
	if !ack {
		d.At = d.At.Add(time.Hour)
	}
	if err := r.s.RecordDraw(r.ctx, r.ev, tornLane, d); err != nil {
		return err
	}
	if ack {
		r.draws = append(r.draws, d)
	}
	return nil
}

// advance raises the lane's serving counter.
func (r *tornRound) advance(to uint64) error {
	if _, err := r.s.Advance(r.ctx, r.ev, tornLane, to); err != nil {
		return err
	}
	r.serving = to
	return nil
}

// bar bars n new visitors (revoked, for an hour) in one call.
func (r *tornRound) bar(ack bool, n int) error {
	var bars []admission.VisitorBar
	for range n {
		bars = append(bars, admission.VisitorBar{Visitor: admission.NewVisitorID(), From: r.now,
			Until: r.now.Add(time.Hour), Reason: admission.BarRevoked})
	}
	if err := r.s.BarVisitors(r.ctx, r.ev, bars); err != nil {
		return err
	}
	if ack {
		for _, b := range bars {
			r.bars[b.Visitor] = b
		}
	}
	return nil
}

// check compares the store with what was acknowledged, through the
// store's reads and in its keys: the draw records and the lane's last
// draw, the bars and their expiry index.
func (r *tornRound) check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, tr := range slices.Sorted(maps.Keys(r.members)) {
		got, err := r.s.Members(r.ctx, r.ev, tornLane, tr)
		if err != nil {
			return err
		}
		if !slices.Equal(got, r.members[tr]) {
			bad("tranche %d has %d members, %d joins were acknowledged", tr, len(got), len(r.members[tr]))
		}
	}

	// The draw records, as stored (score: tranche; member: the draw's
	// canonical JSON), and the last draw that RecordDraw follows.
	recs, err := r.s.c.ZRangeWithScores(r.ctx, r.s.key(r.ev, "draws:"+tornLane), 0, -1).Result()
	if err != nil {
		return err
	}
	var got, want []string
	for _, z := range recs {
		got = append(got, fmt.Sprintf("%v %s", z.Score, z.Member))
	}
	last := ""
	for _, d := range r.draws {
		d.At = d.At.UTC()
		js, err := json.Marshal(d)
		if err != nil {
			return err
		}
		want = append(want, fmt.Sprintf("%d %s", d.Tranche, js))
		last = strconv.Itoa(d.Tranche) + " " + strconv.FormatUint(d.Next(), 10)
	}
	if !slices.Equal(got, want) {
		bad("the lane's draw records are\n\t%s\nbut the acknowledged draws are\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	if got, err := r.s.c.Get(r.ctx, r.s.key(r.ev, "drawlast:"+tornLane)).Result(); err != nil && !errors.Is(err, redis.Nil) {
		return err
	} else if got != last {
		bad("the lane's last draw is %q, the acknowledged draws end with %q", got, last)
	}

	serving, err := r.s.Serving(r.ctx, r.ev)
	if err != nil {
		return err
	}
	if serving[tornLane] != r.serving {
		bad("the serving counter is %d, %d was acknowledged", serving[tornLane], r.serving)
	}

	bars, err := r.s.VisitorBars(r.ctx, r.ev)
	if err != nil {
		return err
	}
	gotBars := map[admission.VisitorID]admission.VisitorBar{}
	for _, b := range bars {
		gotBars[b.Visitor] = b
	}
	if !maps.EqualFunc(gotBars, r.bars, func(a, b admission.VisitorBar) bool {
		return a.From.Equal(b.From) && a.Until.Equal(b.Until) && a.Reason == b.Reason
	}) {
		bad("%d visitors are barred, %d bars were acknowledged", len(gotBars), len(r.bars))
	}
	// Every bar has its expiry, at its Until: VisitorBars forgets a bar
	// only through the expiry index.
	expiry, err := r.s.c.ZRangeWithScores(r.ctx, r.s.key(r.ev, "barexp"), 0, -1).Result()
	if err != nil {
		return err
	}
	until := map[string]int64{}
	for _, z := range expiry {
		until[z.Member.(string)] = int64(z.Score)
	}
	for v, b := range gotBars {
		if ms, ok := until[string(v[:])]; !ok || ms != b.Until.UnixMilli() {
			bad("visitor %x is barred until %v, but its expiry is %d ms (%v)", v[:4], b.Until, ms, ok)
		}
	}
	return errors.Join(errs...)
}
