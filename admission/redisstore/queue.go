// The queue's state: members, seeds, draws, serving counters, claimed
// numbers and used passes.

package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/admission"
)

// AppendMember implements admission.Store: APPEND of the 16 raw bytes,
// sent in a pipeline with concurrent appends.
func (s *Store) AppendMember(ctx context.Context, event, lane string, tranche int, v admission.VisitorID) error {
	if err := checkEvent(event); err != nil {
		return err
	}
	key := s.key(event, membersKey(lane, tranche))
	_, err := s.durable(ctx, key, func(p redis.Pipeliner) redis.Cmder {
		return p.Append(context.Background(), key, string(v[:]))
	})
	if err != nil {
		return fail(err)
	}
	return nil
}

// SpendsOnce implements admission.OnceStore: on one Redis (standalone,
// or Sentinel's master) the join's script spends its value, one round
// trip instead of the replay guard's and the join's. On a Cluster it
// declines: the value's key would have to sit on the event's shard, whose
// one thread bounds the event's joins (docs/capacity.md), where the
// replay guard's keys spread over every shard.
func (s *Store) SpendsOnce() bool { return !s.cluster }

// errOnceCluster: AppendMemberOnce or SpendOnce on a Cluster, which
// declines to spend values (SpendsOnce).
var errOnceCluster = errors.New("redisstore: a Cluster leaves one-time values to the replay guard")

// AppendMemberOnce implements admission.OnceStore: the value's key, which
// is the replay guard's own (Options.ReplayPrefix), and the append in one
// script, pipelined with other joins like AppendMember.
func (s *Store) AppendMemberOnce(ctx context.Context, event, lane string, tranche int, v admission.VisitorID,
	once []byte, until time.Time) (bool, error) {
	if err := checkEvent(event); err != nil {
		return false, err
	}
	return s.once(ctx, once, until, string(v[:]), s.key(event, membersKey(lane, tranche)))
}

// SpendOnce implements admission.OnceStore: the script of
// AppendMemberOnce without the append, under a random mark.
func (s *Store) SpendOnce(ctx context.Context, event string, once []byte, until time.Time) (bool, error) {
	if err := checkEvent(event); err != nil {
		return false, err
	}
	var mark [16]byte
	if _, err := rand.Read(mark[:]); err != nil {
		return false, fmt.Errorf("redisstore: no randomness: %w", err)
	}
	return s.once(ctx, once, until, string(mark[:]))
}

// once runs the once script: keys are the value's, then (for a join) the
// tranche's. On one Redis a script may touch keys of any slot.
func (s *Store) once(ctx context.Context, once []byte, until time.Time, mark string, keys ...string) (bool, error) {
	if s.cluster {
		return false, errOnceCluster
	}
	// Round up to the millisecond, so the value is never forgotten
	// early; Redis wants a positive time.
	ms := until.UnixMilli()
	if until.Nanosecond()%int(time.Millisecond) != 0 {
		ms++
	}
	keys = append([]string{s.replayPrefix + hex.EncodeToString(once)}, keys...)
	n, err := s.batch.DurableScript(ctx, scriptOnce, keys, mark, max(ms, 1))
	if err != nil {
		return false, fail(err)
	}
	return n == int64(1), nil
}

// Members implements admission.Store: STRLEN, then GETRANGE in 16 MiB
// pieces. The slice is the caller's.
func (s *Store) Members(ctx context.Context, event, lane string, tranche int) ([]admission.VisitorID, error) {
	if err := checkEvent(event); err != nil {
		return nil, err
	}
	key := s.key(event, membersKey(lane, tranche))
	n, err := s.c.StrLen(ctx, key).Result()
	if err != nil {
		return nil, fail(err)
	}
	n -= n % int64(idSize)
	out := make([]admission.VisitorID, 0, n/int64(idSize))
	// Members are only ever appended, so the first n bytes stay as they
	// were when STRLEN answered.
	for off := int64(0); off < n; off += readChunk {
		end := min(off+readChunk, n) - 1
		b, err := s.c.GetRange(ctx, key, off, end).Bytes()
		if err != nil {
			return nil, fail(err)
		}
		if int64(len(b)) != end-off+1 {
			return nil, fmt.Errorf("redisstore: members of %s shrank while being read", key)
		}
		for i := 0; i+idSize <= len(b); i += idSize {
			out = append(out, admission.VisitorID(b[i:i+idSize]))
		}
	}
	return out, nil
}

const idSize = len(admission.VisitorID{})

// MemberCount implements admission.Store: STRLEN / 16.
func (s *Store) MemberCount(ctx context.Context, event, lane string, tranche int) (int, error) {
	if err := checkEvent(event); err != nil {
		return 0, err
	}
	n, err := s.c.StrLen(ctx, s.key(event, membersKey(lane, tranche))).Result()
	if err != nil {
		return 0, fail(err)
	}
	return int(n) / idSize, nil
}

// Seed implements admission.Store.
func (s *Store) Seed(ctx context.Context, event, lane string, tranche int, proposal []byte) ([]byte, error) {
	if err := checkEvent(event); err != nil {
		return nil, err
	}
	if len(proposal) == 0 {
		return nil, errors.New("redisstore: empty seed proposal")
	}
	key := s.key(event, "seed:"+lane+":"+strconv.Itoa(tranche))
	seed, err := s.script(ctx, scriptSeed, []string{key}, proposal).Text()
	if err != nil {
		return nil, fail(err)
	}
	return []byte(seed), nil
}

// RecordDraw implements admission.Store. The draw is stored as JSON with
// its time in UTC, so that recording the same draw again compares equal
// byte for byte.
func (s *Store) RecordDraw(ctx context.Context, event, lane string, d admission.Draw) error {
	if err := checkEvent(event); err != nil {
		return err
	}
	d.At = d.At.UTC()
	js, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("redisstore: %w", err)
	}
	keys := []string{s.key(event, "draws:"+lane), s.key(event, "drawlast:"+lane)}
	ok, err := s.script(ctx, scriptDraw, keys, d.Tranche, strconv.FormatUint(d.First, 10),
		strconv.FormatUint(d.Next(), 10), js).Int()
	if err != nil {
		return fail(err)
	}
	if ok != 1 {
		return fmt.Errorf("%w: lane %q: tranche %d starting at %d is not the next draw, nor one already recorded",
			admission.ErrDrawConflict, lane, d.Tranche, d.First)
	}
	return nil
}

// Draws implements admission.Store.
func (s *Store) Draws(ctx context.Context, event, lane string, after int) ([]admission.Draw, error) {
	if err := checkEvent(event); err != nil {
		return nil, err
	}
	raw, err := s.c.ZRangeByScore(ctx, s.key(event, "draws:"+lane), &redis.ZRangeBy{
		Min: "(" + strconv.Itoa(after), Max: "+inf"}).Result()
	if err != nil {
		return nil, fail(err)
	}
	out := make([]admission.Draw, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal([]byte(r), &out[i]); err != nil {
			return nil, fmt.Errorf("redisstore: bad draw record of lane %q: %w", lane, err)
		}
	}
	return out, nil
}

// Advance implements admission.Store.
func (s *Store) Advance(ctx context.Context, event, lane string, to uint64) (uint64, error) {
	if err := checkEvent(event); err != nil {
		return 0, err
	}
	v, err := s.script(ctx, scriptAdvance, []string{s.key(event, "serving")}, lane, strconv.FormatUint(to, 10)).Text()
	if err != nil {
		return 0, fail(err)
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("redisstore: bad serving counter %q: %w", v, err)
	}
	return n, nil
}

// Serving implements admission.Store.
func (s *Store) Serving(ctx context.Context, event string) (map[string]uint64, error) {
	if err := checkEvent(event); err != nil {
		return nil, err
	}
	raw, err := s.c.HGetAll(ctx, s.key(event, "serving")).Result()
	if err != nil {
		return nil, fail(err)
	}
	out := make(map[string]uint64, len(raw))
	for lane, v := range raw {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("redisstore: bad serving counter %q of lane %q: %w", v, lane, err)
		}
		out[lane] = n
	}
	return out, nil
}

// Claim implements admission.Store: SETBIT, sent in a pipeline with
// concurrent claims. n must be at most MaxNumber.
func (s *Store) Claim(ctx context.Context, event, lane string, n uint64) error {
	if err := checkEvent(event); err != nil {
		return err
	}
	if n > MaxNumber {
		return fmt.Errorf("redisstore: cannot claim number %d (at most %d)", n, uint64(MaxNumber))
	}
	key := s.key(event, "claims:"+lane)
	_, err := s.batch.Do(ctx, func(p redis.Pipeliner) redis.Cmder {
		return p.SetBit(context.Background(), key, int64(n), 1)
	})
	if err != nil {
		return fail(err)
	}
	return nil
}

// Claimed implements admission.Store: GETRANGE of the bitmap's bytes
// (in 16 MiB pieces), bits picked out here. It answers for at most 2^30
// numbers per call.
func (s *Store) Claimed(ctx context.Context, event, lane string, from, to uint64) ([]bool, error) {
	if err := checkEvent(event); err != nil {
		return nil, err
	}
	if from > to {
		return []bool{}, nil
	}
	if to-from >= maxClaimedSpan {
		return nil, fmt.Errorf("redisstore: Claimed of %d..%d spans too many numbers", from, to)
	}
	return s.readBits(ctx, s.key(event, "claims:"+lane), from, to)
}

// readBits reads bits from..to of a bitmap: GETRANGE of its bytes (in
// 16 MiB pieces), bits picked out here. Bits past the bitmap's end, or
// past MaxNumber, are clear.
func (s *Store) readBits(ctx context.Context, key string, from, to uint64) ([]bool, error) {
	out := make([]bool, to-from+1)
	if from > MaxNumber {
		return out, nil
	}
	last := min(to, MaxNumber) / 8
	for lo := from / 8; lo <= last; lo += uint64(readChunk) {
		hi := min(lo+uint64(readChunk)-1, last)
		b, err := s.c.GetRange(ctx, key, int64(lo), int64(hi)).Bytes()
		if err != nil {
			return nil, fail(err)
		}
		// Bit n is bit n%8, most significant first, of byte n/8.
		for i, c := range b {
			if c == 0 {
				continue
			}
			for bit := range uint64(8) {
				n := (lo+uint64(i))*8 + bit
				if n >= from && n <= to && c&(0x80>>bit) != 0 {
					out[n-from] = true
				}
			}
		}
		if uint64(len(b)) < hi-lo+1 {
			break // the bitmap ends here
		}
	}
	return out, nil
}

// useChunk is how many numbers one BITFIELD of MarkUsed sets.
const useChunk = 1024

// MarkUsed implements admission.Store: BITFIELD SET u1 on a bitmap per
// lane (as Claim's), at most useChunk numbers per command, the commands
// sent in one pipeline. Numbers must be 1 to MaxNumber. Like every key of
// an event, the bitmap stays until an operator deletes the event's keys;
// it takes a bit per number up to the largest marked (125 kB a million).
func (s *Store) MarkUsed(ctx context.Context, event, lane string, numbers []uint64) error {
	if err := checkEvent(event); err != nil {
		return err
	}
	if err := admission.CheckUseBatch(numbers, MaxNumber); err != nil {
		return fmt.Errorf("redisstore: %w", err)
	}
	if len(numbers) == 0 {
		return nil
	}
	key := s.key(event, "used:"+lane)
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for len(numbers) > 0 {
			k := min(len(numbers), useChunk)
			args := make([]any, 0, 4*k)
			for _, n := range numbers[:k] {
				args = append(args, "SET", "u1", n, 1)
			}
			p.BitField(ctx, key, args...)
			numbers = numbers[k:]
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	return nil
}

// Used implements admission.Store: GETRANGE of the bitmap MarkUsed sets.
func (s *Store) Used(ctx context.Context, event, lane string, from, to uint64) ([]bool, error) {
	if err := checkEvent(event); err != nil {
		return nil, err
	}
	if err := admission.CheckUsedRange(from, to); err != nil {
		return nil, fmt.Errorf("redisstore: %w", err)
	}
	return s.readBits(ctx, s.key(event, "used:"+lane), from, to)
}
