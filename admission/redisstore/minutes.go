package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/admission"
)

// RecordMinute implements admission.Store: the records are fields of a
// hash ("minutes", by the minute's Unix seconds) with an index of when
// each runs out ("minutes:until", a sorted set), both under the event's
// hash tag, and both keys expire keep after the last write. One script
// call, durable as the other writes.
func (s *Store) RecordMinute(ctx context.Context, event string, minute time.Time, record []byte, keep time.Duration) error {
	if err := checkEvent(event); err != nil {
		return err
	}
	if keep < time.Millisecond {
		return fmt.Errorf("redisstore: a minute record needs a retention of at least 1ms (got %v)", keep)
	}
	keys := []string{s.key(event, "minutes:until"), s.key(event, "minutes")}
	m := minute.Truncate(time.Minute).Unix()
	if err := s.script(ctx, scriptMinute, keys, m, record, keep.Milliseconds()).Err(); err != nil {
		return fail(err)
	}
	return nil
}

// Minutes implements admission.Store: the index, read whole (a minute
// a record, 43,200 in 30 days), then the records in range that have not
// run out by this process's clock, in one HMGET.
func (s *Store) Minutes(ctx context.Context, event string, from, to time.Time) ([]admission.MinuteRecord, error) {
	if err := checkEvent(event); err != nil {
		return nil, err
	}
	idx, err := s.c.ZRangeWithScores(ctx, s.key(event, "minutes:until"), 0, -1).Result()
	if err != nil {
		return nil, fail(err)
	}
	now := time.Now().UnixMilli()
	var mins []int64
	for _, z := range idx {
		name, _ := z.Member.(string)
		m, err := strconv.ParseInt(name, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("redisstore: bad minute %q in the index", name)
		}
		at := time.Unix(m, 0)
		if int64(z.Score) <= now || at.Before(from) || !at.Before(to) {
			continue
		}
		mins = append(mins, m)
	}
	if len(mins) == 0 {
		return nil, nil
	}
	slices.Sort(mins)
	fields := make([]string, len(mins))
	for i, m := range mins {
		fields[i] = strconv.FormatInt(m, 10)
	}
	vals, err := s.c.HMGet(ctx, s.key(event, "minutes"), fields...).Result()
	if err != nil && err != redis.Nil {
		return nil, fail(err)
	}
	out := make([]admission.MinuteRecord, 0, len(mins))
	for i, v := range vals {
		if str, ok := v.(string); ok {
			out = append(out, admission.MinuteRecord{Minute: time.Unix(mins[i], 0).UTC(), Record: []byte(str)})
		}
	}
	return out, nil
}
