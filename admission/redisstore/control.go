// Revocations, visitor bars, invite codes, the operator's control, the
// controller's saved state and the lease.

package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/admission"
)

// Revoke implements admission.Store. Times are kept to the millisecond;
// revoking a pass again keeps the later time; a time already over (by
// the Redis server's clock) is not recorded.
func (s *Store) Revoke(ctx context.Context, event, passID string, until time.Time) error {
	if err := checkEvent(event); err != nil {
		return err
	}
	if err := s.script(ctx, scriptRevoke, []string{s.key(event, "revoked")}, passID, until.UnixMilli()).Err(); err != nil {
		return fail(err)
	}
	return nil
}

// Revocations implements admission.Store.
func (s *Store) Revocations(ctx context.Context, event string) (map[string]time.Time, error) {
	if err := checkEvent(event); err != nil {
		return nil, err
	}
	raw, err := scriptRevocations.Run(ctx, s.c, []string{s.key(event, "revoked")}).StringSlice()
	if err != nil {
		return nil, fail(err)
	}
	out := make(map[string]time.Time, len(raw)/2)
	for i := 0; i+1 < len(raw); i += 2 {
		ms, err := strconv.ParseFloat(raw[i+1], 64)
		if err != nil {
			return nil, fmt.Errorf("redisstore: bad revocation time %q: %w", raw[i+1], err)
		}
		out[raw[i]] = time.UnixMilli(int64(ms))
	}
	return out, nil
}

// maxBarsPerCall bounds the bars one script call records, so a large
// batch does not block Redis for long.
const maxBarsPerCall = 500

// BarVisitors implements admission.Store: visitors are hash fields (the
// 16 raw bytes), with an expiry index. Times are kept to the millisecond.
func (s *Store) BarVisitors(ctx context.Context, event string, bars []admission.VisitorBar) error {
	if err := checkEvent(event); err != nil {
		return err
	}
	keys := []string{s.key(event, "bars"), s.key(event, "barexp")}
	for len(bars) > 0 {
		n := min(len(bars), maxBarsPerCall)
		args := make([]any, 0, 4*n)
		for _, b := range bars[:n] {
			switch b.Reason {
			case admission.BarRevoked, admission.BarCompleted:
			default:
				return fmt.Errorf("redisstore: unknown bar reason %q", b.Reason)
			}
			args = append(args, string(b.Visitor[:]), b.From.UnixMilli(), b.Until.UnixMilli(), string(b.Reason))
		}
		if err := s.script(ctx, scriptBar, keys, args...).Err(); err != nil {
			return fail(err)
		}
		bars = bars[n:]
	}
	return nil
}

// VisitorBars implements admission.Store.
func (s *Store) VisitorBars(ctx context.Context, event string) ([]admission.VisitorBar, error) {
	if err := checkEvent(event); err != nil {
		return nil, err
	}
	raw, err := scriptBars.Run(ctx, s.c, []string{s.key(event, "bars"), s.key(event, "barexp")}).StringSlice()
	if err != nil {
		return nil, fail(err)
	}
	out := make([]admission.VisitorBar, 0, len(raw)/2)
	for i := 0; i+1 < len(raw); i += 2 {
		b, err := parseBar(raw[i], raw[i+1])
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// parseBar reads a bar as the bar script stores it.
func parseBar(visitor, value string) (admission.VisitorBar, error) {
	var b admission.VisitorBar
	bad := func() (admission.VisitorBar, error) {
		return admission.VisitorBar{}, fmt.Errorf("redisstore: bad visitor bar %q", value)
	}
	if len(visitor) != len(b.Visitor) {
		return bad()
	}
	copy(b.Visitor[:], visitor)
	from, rest, ok := strings.Cut(value, ":")
	if !ok {
		return bad()
	}
	until, reason, ok := strings.Cut(rest, ":")
	if !ok {
		return bad()
	}
	f, err1 := strconv.ParseInt(from, 10, 64)
	u, err2 := strconv.ParseInt(until, 10, 64)
	if err1 != nil || err2 != nil {
		return bad()
	}
	b.From, b.Until, b.Reason = time.UnixMilli(f), time.UnixMilli(u), admission.BarReason(reason)
	return b, nil
}

// UseInvite implements admission.Store: SET NX PXAT forget. A zero
// forget remembers the use for good; a forget already past is forgotten
// at once (Redis deletes a key set to expire in the past).
func (s *Store) UseInvite(ctx context.Context, event, code string, forget time.Time) (bool, error) {
	if err := checkEvent(event); err != nil {
		return false, err
	}
	args := []any{"SET", s.key(event, "inv:"+code), "1", "NX"}
	if !forget.IsZero() {
		args = append(args, "PXAT", max(forget.UnixMilli(), 1))
	}
	err := s.do(ctx, args...).Err()
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, redis.Nil):
		return false, nil
	}
	return false, fail(err)
}

// PlaceAccount implements admission.Store: SET NX GET PXAT forget, one
// atomic step (Redis 7.0 or later), the place as JSON. forget is kept to
// the millisecond; a zero forget is a time past.
func (s *Store) PlaceAccount(ctx context.Context, event, account string, p admission.AccountPlace, forget time.Time) (admission.AccountPlace, bool, error) {
	if err := checkEvent(event); err != nil {
		return admission.AccountPlace{}, false, err
	}
	if forget.IsZero() {
		return p, true, nil
	}
	js, err := json.Marshal(p)
	if err != nil {
		return admission.AccountPlace{}, false, fmt.Errorf("redisstore: %w", err)
	}
	old, err := s.do(ctx, "SET", s.key(event, "acct:"+account), js, "NX", "GET",
		"PXAT", max(forget.UnixMilli(), 1)).Text()
	switch {
	case errors.Is(err, redis.Nil):
		return p, true, nil
	case err != nil:
		return admission.AccountPlace{}, false, fail(err)
	}
	stored, err := decodeAccount(old)
	return stored, false, err
}

// AccountPlace implements admission.Store.
func (s *Store) AccountPlace(ctx context.Context, event, account string) (admission.AccountPlace, bool, error) {
	if err := checkEvent(event); err != nil {
		return admission.AccountPlace{}, false, err
	}
	v, err := s.c.Get(ctx, s.key(event, "acct:"+account)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return admission.AccountPlace{}, false, nil
	case err != nil:
		return admission.AccountPlace{}, false, fail(err)
	}
	p, err := decodeAccount(v)
	return p, err == nil, err
}

// decodeAccount reads an account's place as PlaceAccount stored it.
func decodeAccount(v string) (admission.AccountPlace, error) {
	var p admission.AccountPlace
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return admission.AccountPlace{}, fmt.Errorf("redisstore: %w: bad account place: %v", admission.ErrStoreDown, err)
	}
	return p, nil
}

// SetControl implements admission.Store.
func (s *Store) SetControl(ctx context.Context, event string, c admission.Control) error {
	if err := checkEvent(event); err != nil {
		return err
	}
	js, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("redisstore: %w", err)
	}
	if err := s.do(ctx, "SET", s.key(event, "control"), js).Err(); err != nil {
		return fail(err)
	}
	return nil
}

// Control implements admission.Store.
func (s *Store) Control(ctx context.Context, event string) (admission.Control, error) {
	var c admission.Control
	if err := checkEvent(event); err != nil {
		return c, err
	}
	js, err := s.c.Get(ctx, s.key(event, "control")).Bytes()
	if errors.Is(err, redis.Nil) {
		return c, nil
	}
	if err != nil {
		return c, fail(err)
	}
	if err := json.Unmarshal(js, &c); err != nil {
		return admission.Control{}, fmt.Errorf("redisstore: bad control of event %q: %w", event, err)
	}
	return c, nil
}

// SaveController implements admission.Store (not batched: one SET).
// Saving nil or an empty state removes the saved one.
func (s *Store) SaveController(ctx context.Context, event string, state []byte) error {
	if err := checkEvent(event); err != nil {
		return err
	}
	key := s.key(event, "controller")
	var err error
	if len(state) == 0 {
		err = s.c.Del(ctx, key).Err()
	} else {
		err = s.c.Set(ctx, key, state, 0).Err()
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// LoadController implements admission.Store.
func (s *Store) LoadController(ctx context.Context, event string) ([]byte, error) {
	if err := checkEvent(event); err != nil {
		return nil, err
	}
	b, err := s.c.Get(ctx, s.key(event, "controller")).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fail(err)
	}
	return b, nil
}

// Lease implements admission.Store: the lease is taken with SET PX when
// free, renewed (PEXPIRE) only by its holder; other holders get false
// until it runs out, ttl after its holder's last renewal. ttl is kept to
// the millisecond.
func (s *Store) Lease(ctx context.Context, event, holder string, ttl time.Duration) (bool, error) {
	if err := checkEvent(event); err != nil {
		return false, err
	}
	if holder == "" || ttl < time.Millisecond {
		return false, fmt.Errorf("redisstore: a lease needs a holder and a ttl of at least 1ms (got %q, %v)", holder, ttl)
	}
	ok, err := scriptLease.Run(ctx, s.c, []string{s.key(event, "lease")}, holder, ttl.Milliseconds()).Int()
	if err != nil {
		return false, fail(err)
	}
	return ok == 1, nil
}

// GrantSlots implements admission.Store: one hash with what is left of
// the grant and how much was taken, expiring with the grant.
func (s *Store) GrantSlots(ctx context.Context, event string, n int, ttl time.Duration) (int, error) {
	if err := checkEvent(event); err != nil {
		return 0, err
	}
	if ttl < time.Millisecond {
		return 0, fmt.Errorf("redisstore: a grant needs a ttl of at least 1ms (got %v)", ttl)
	}
	taken, err := scriptGrant.Run(ctx, s.c, []string{s.key(event, "slots")}, max(n, 0), ttl.Milliseconds()).Int()
	if err != nil {
		return 0, fail(err)
	}
	return taken, nil
}

// TakeSlot implements admission.Store.
func (s *Store) TakeSlot(ctx context.Context, event string) (bool, error) {
	if err := checkEvent(event); err != nil {
		return false, err
	}
	ok, err := scriptTake.Run(ctx, s.c, []string{s.key(event, "slots")}).Int()
	if err != nil {
		return false, fail(err)
	}
	return ok == 1, nil
}

// PublishSample implements admission.Store: one key per replica,
// "sample:<replica>", set with PX ttl, and an index of them (a sorted set
// scored by when each runs out), all under the event's hash tag, so one
// Cluster shard holds an event's samples. One script call a tick.
func (s *Store) PublishSample(ctx context.Context, event, replica string, sample []byte, ttl time.Duration) error {
	if err := checkEvent(event); err != nil {
		return err
	}
	if replica == "" || ttl < time.Millisecond {
		return fmt.Errorf("redisstore: a sample needs a replica and a ttl of at least 1ms (got %q, %v)", replica, ttl)
	}
	keys := []string{s.key(event, "samples"), s.key(event, "sample:"+replica)}
	if err := scriptPublish.Run(ctx, s.c, keys, replica, sample, ttl.Milliseconds()).Err(); err != nil {
		return fail(err)
	}
	return nil
}

// Samples implements admission.Store: the index, then the records it
// names in one MGET (a record that ran out reads as nil and is left
// out).
func (s *Store) Samples(ctx context.Context, event string) (map[string][]byte, error) {
	if err := checkEvent(event); err != nil {
		return nil, err
	}
	names, err := s.c.ZRange(ctx, s.key(event, "samples"), 0, -1).Result()
	if err != nil {
		return nil, fail(err)
	}
	out := make(map[string][]byte, len(names))
	if len(names) == 0 {
		return out, nil
	}
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = s.key(event, "sample:"+n)
	}
	vals, err := s.c.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, fail(err)
	}
	for i, v := range vals {
		if str, ok := v.(string); ok {
			out[names[i]] = []byte(str)
		}
	}
	return out, nil
}
