package redisstore

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/redisbatch"
	"github.com/waitroom/waitroom/internal/redispersist"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// The scripts, one per compound operation.
var (
	scriptSeed        = load("seed")
	scriptDraw        = load("draw")
	scriptAdvance     = load("advance")
	scriptRevoke      = load("revoke")
	scriptRevocations = load("revocations")
	scriptLease       = load("lease")
	scriptBar         = load("bar")
	scriptBars        = load("bars")
)

func load(name string) *redis.Script {
	src, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(err)
	}
	return redis.NewScript(string(src))
}

// Defaults of Options.
const (
	DefaultPrefix    = "wr:adm:"
	DefaultPipelines = 4
)

// MaxNumber is the largest queue number Claim accepts: the largest bit
// offset of a Redis bitmap.
const MaxNumber = 1<<32 - 1

// maxClaimedSpan bounds how many numbers one Claimed call answers for; a
// larger span is almost surely an underflow in the caller.
const maxClaimedSpan = 1 << 30

// readChunk is how many bytes one GETRANGE reads (a multiple of 16: whole
// visitor ids). A variable so that tests can make it small.
var readChunk int64 = 16 << 20

// Options configure a Store.
type Options struct {
	// Client is a standalone (*redis.Client) or cluster
	// (*redis.ClusterClient) client. The Store does not close it.
	Client redis.UniversalClient
	// Prefix starts every key (default "wr:adm:"); an event's keys are
	// Prefix + "{adm:<event>}:…". It may not contain '{' or '}'.
	Prefix string
	// Pipelines is how many pipelines of AppendMember and Claim commands
	// may be in flight at once (default 4).
	Pipelines int
	// Logger receives warnings; slog.Default when nil.
	Logger *slog.Logger
	// RequirePersistence makes New fail when a Redis master has
	// appendonly off or aof-load-truncated yes; otherwise New only logs
	// an error.
	RequirePersistence bool
}

// Store is the Redis admission store. It is safe for concurrent use, by
// any number of processes.
type Store struct {
	c      redis.UniversalClient
	prefix string
	log    *slog.Logger
	batch  *redisbatch.Batcher
}

// New checks the connection and the servers' persistence settings and
// returns a Store. A master with appendonly off or aof-load-truncated yes
// fails New with RequirePersistence and gets an error in the log
// otherwise; appendfsync other than always gets a warning.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.Client == nil {
		return nil, errors.New("redisstore: a client is required")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if strings.ContainsAny(opts.Prefix, "{}") {
		return nil, fmt.Errorf("redisstore: prefix %q contains a brace, which would change the keys' hash slot", opts.Prefix)
	}
	if opts.Pipelines <= 0 {
		opts.Pipelines = DefaultPipelines
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Store{c: opts.Client, prefix: opts.Prefix, log: opts.Logger}
	if err := s.c.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("redisstore: cannot reach Redis: %w", err)
	}
	if err := redispersist.Enforce(ctx, s.c, s.log, persistence, opts.RequirePersistence); err != nil {
		return nil, fmt.Errorf("redisstore: %w", err)
	}
	s.batch = redisbatch.New(s.c, opts.Pipelines)
	return s, nil
}

// persistence is what the admission store keeps in Redis, for the
// messages of redispersist.Enforce. RecordDraw and BarVisitors write more
// than one key and reach the AOF as one MULTI/EXEC block. Redis with
// aof-load-truncated yes cuts a torn block inside it and leaves its
// first commands in the file, unapplied; Redis appends after them, and
// the next restart either applies them with the next block (a draw that
// was never acknowledged comes back beside the one recorded again after
// the crash, so a tranche has two draws and two orders; a visitor barred
// for good, without the bar's expiry) or, when no block follows before
// the next crash, drops everything acknowledged after them (joins,
// serving counters, seeds). See TestTornWriteLoadTruncated.
var persistence = redispersist.Stakes{
	Role:     "admission",
	Lost:     "every queued visitor, draw and serving counter",
	LostLast: "the last acknowledged joins",
	Torn:     "applies half a draw or a batch of visitor bars (a tranche drawn twice in two orders, a bar that never ends) or drops the joins acknowledged after it",
}

// Close waits for pipelined calls in flight; the client belongs to the
// caller, who closes it.
func (s *Store) Close() error {
	s.batch.Close()
	return nil
}

// key is one of an event's keys.
func (s *Store) key(event, name string) string {
	return s.prefix + "{adm:" + event + "}:" + name
}

func membersKey(lane string, tranche int) string {
	return "m:" + lane + ":" + strconv.Itoa(tranche)
}

// checkEvent refuses event ids that would break the key layout: braces
// would change the hash tag or let two events' keys meet.
func checkEvent(event string) error {
	if event == "" || strings.ContainsAny(event, "{}") {
		return fmt.Errorf("redisstore: event id %q is empty or contains a brace", event)
	}
	return nil
}

// fail turns a Redis error into the store's: context errors as they are,
// anything else wrapping admission.ErrStoreDown.
func fail(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("redisstore: %w: %w", admission.ErrStoreDown, err)
}

// AppendMember implements admission.Store: APPEND of the 16 raw bytes,
// sent in a pipeline with concurrent appends.
func (s *Store) AppendMember(ctx context.Context, event, lane string, tranche int, v admission.VisitorID) error {
	if err := checkEvent(event); err != nil {
		return err
	}
	key := s.key(event, membersKey(lane, tranche))
	_, err := s.batch.Do(ctx, func(p redis.Pipeliner) redis.Cmder {
		return p.Append(context.Background(), key, string(v[:]))
	})
	if err != nil {
		return fail(err)
	}
	return nil
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
	seed, err := scriptSeed.Run(ctx, s.c, []string{key}, proposal).Text()
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
	ok, err := scriptDraw.Run(ctx, s.c, keys, d.Tranche, strconv.FormatUint(d.First, 10),
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
	v, err := scriptAdvance.Run(ctx, s.c, []string{s.key(event, "serving")}, lane, strconv.FormatUint(to, 10)).Text()
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
	out := make([]bool, to-from+1)
	if from > MaxNumber {
		return out, nil
	}
	key := s.key(event, "claims:"+lane)
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

// Revoke implements admission.Store. Times are kept to the millisecond;
// revoking a pass again keeps the later time; a time already over (by
// the Redis server's clock) is not recorded.
func (s *Store) Revoke(ctx context.Context, event, passID string, until time.Time) error {
	if err := checkEvent(event); err != nil {
		return err
	}
	if err := scriptRevoke.Run(ctx, s.c, []string{s.key(event, "revoked")}, passID, until.UnixMilli()).Err(); err != nil {
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
		if err := scriptBar.Run(ctx, s.c, keys, args...).Err(); err != nil {
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
	err := s.c.Do(ctx, args...).Err()
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, redis.Nil):
		return false, nil
	}
	return false, fail(err)
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
	if err := s.c.Set(ctx, s.key(event, "control"), js, 0).Err(); err != nil {
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

var _ admission.Store = (*Store)(nil)
