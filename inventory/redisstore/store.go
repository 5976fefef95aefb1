package redisstore

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/redisbatch"
	"github.com/waitroom/waitroom/internal/redisconn"
	"github.com/waitroom/waitroom/internal/redispersist"
	"github.com/waitroom/waitroom/inventory"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// The scripts: the shared prelude followed by one operation's body.
var (
	scriptDefine  = load("define")
	scriptHold    = load("hold")
	scriptConfirm = load("confirm")
	scriptRelease = load("release")
	scriptCancel  = load("cancel")
	scriptExtend  = load("extend")
	scriptRead    = load("read")
)

func load(name string) *redis.Script {
	prelude, err := luaFiles.ReadFile("lua/prelude.lua")
	if err != nil {
		panic(err)
	}
	body, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(err)
	}
	return redis.NewScript(string(prelude) + "\n" + string(body))
}

// Scripts returns every script's source, for tools that load them (the
// benchmark runs the hold script with redis-benchmark).
func Scripts() map[string]string {
	out := map[string]string{}
	for _, n := range []string{"define", "hold", "confirm", "release", "cancel", "extend", "read"} {
		prelude, _ := luaFiles.ReadFile("lua/prelude.lua")
		body, _ := luaFiles.ReadFile("lua/" + n + ".lua")
		out[n] = string(prelude) + "\n" + string(body)
	}
	return out
}

// Defaults of Options.
const (
	DefaultPrefix         = "wr:inv:"
	DefaultIdempotencyTTL = 24 * time.Hour
	DefaultHoldRetention  = time.Hour
	DefaultPipelines      = 4
)

// Options configure a Store.
type Options struct {
	// Client is a standalone (*redis.Client) or cluster (*redis.ClusterClient)
	// client. The Store does not close it.
	Client redis.UniversalClient
	// Prefix starts every key; an event's keys are Prefix + "{ev:<id>}:…".
	Prefix string
	// IdempotencyTTL is how long an idempotency key is remembered.
	IdempotencyTTL time.Duration
	// HoldRetention is how long a released or expired hold stays readable.
	HoldRetention time.Duration
	// RequirePersistence makes New fail when a Redis node has appendonly
	// off or aof-load-truncated yes; otherwise New only warns.
	RequirePersistence bool
	// Pipelines is how many pipelines of script calls may be in flight
	// at once (see internal/redisbatch); 0 means DefaultPipelines.
	Pipelines int
	// Logger receives warnings; slog.Default when nil.
	Logger *slog.Logger
	// MinReplicasAcked: holds, confirms, releases, extensions, cancels
	// and event definitions are acknowledged only after WAIT confirms
	// that many replicas have them; fewer within AckTimeout make the
	// call fail with inventory.ErrUnavailable. 0 waits for none.
	MinReplicasAcked int
	// AckTimeout bounds that WAIT (default redisconn.DefaultAckTimeout).
	AckTimeout time.Duration
}

// Store is the Redis inventory store. Every operation is one Lua script
// over one event's keys (one hash tag, so one Cluster slot), run by SHA
// with a fallback to EVAL on NOSCRIPT. Expiry uses the Redis server's
// clock. It is safe for concurrent use, by any number of processes.
type Store struct {
	c      redis.UniversalClient
	batch  *redisbatch.Batcher
	prefix string
	ret    int64 // hold retention, ms
	idem   int64 // idempotency TTL, ms
	log    *slog.Logger
}

// New checks the connection and the server's persistence settings and
// returns a Store.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.Client == nil {
		return nil, errors.New("redisstore: a client is required")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.IdempotencyTTL <= 0 {
		opts.IdempotencyTTL = DefaultIdempotencyTTL
	}
	if opts.HoldRetention <= 0 {
		opts.HoldRetention = DefaultHoldRetention
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Store{c: opts.Client, prefix: opts.Prefix, ret: opts.HoldRetention.Milliseconds(),
		idem: opts.IdempotencyTTL.Milliseconds(), log: opts.Logger}
	if err := s.c.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("redisstore: cannot reach Redis: %w", err)
	}
	if err := s.checkPersistence(ctx, opts.RequirePersistence); err != nil {
		return nil, err
	}
	if opts.Pipelines <= 0 {
		opts.Pipelines = DefaultPipelines
	}
	if opts.AckTimeout <= 0 {
		opts.AckTimeout = redisconn.DefaultAckTimeout
	}
	s.batch = redisbatch.NewAcked(s.c, opts.Pipelines, redisbatch.Ack{Replicas: opts.MinReplicasAcked,
		Timeout: opts.AckTimeout, RetryFor: redisconn.DefaultRetryFor, NotExecuted: redisconn.NotExecuted})
	return s, nil
}

// persistence is what the inventory keeps in Redis, for the messages of
// redispersist.Enforce. Every script that changes more than one key
// reaches the AOF as one MULTI/EXEC block: half a confirm moves the
// counters but not the hold, order and audit entry; half a release or
// cancel frees a seat while its hold or order still has it.
var persistence = redispersist.Stakes{
	Role:     "inventory",
	Lost:     "acknowledged holds and sales",
	LostLast: "the last acknowledged sales",
	Torn:     "applies the first half of an inventory change (a seat can be sold twice)",
}

// checkPersistence reads appendonly, appendfsync and aof-load-truncated
// from every master: a master without the AOF, or one that would start
// from a torn AOF, fails New when persistence is required and gets a
// loud error otherwise.
func (s *Store) checkPersistence(ctx context.Context, require bool) error {
	if err := redispersist.Enforce(ctx, s.c, s.log, persistence, require); err != nil {
		return fmt.Errorf("redisstore: %w", err)
	}
	return nil
}

// Ping implements inventory.Store: every master answers, at once (no
// retries), for readiness.
func (s *Store) Ping(ctx context.Context) error {
	if err := redisconn.Ping(ctx, s.c); err != nil {
		return s.unavailable(err)
	}
	return nil
}

// Close waits for calls in flight and stops the pipelines; the client
// belongs to the caller, who closes it.
func (s *Store) Close() error {
	s.batch.Close()
	return nil
}

func (s *Store) key(event, name string) string {
	return s.prefix + "{ev:" + event + "}:" + name
}

// reply is a script's answer: ordered key/value pairs.
type reply struct {
	kv       []string
	replayed bool
}

func (r reply) get(k string) string {
	for i := 0; i+1 < len(r.kv); i += 2 {
		if r.kv[i] == k {
			return r.kv[i+1]
		}
	}
	return ""
}

func (r reply) int(k string) int64 {
	n, _ := strconv.ParseInt(r.get(k), 10, 64)
	return n
}

// run calls a script on an event and turns an error reply into an
// *inventory.Error.
func (s *Store) run(ctx context.Context, sc *redis.Script, event string, args ...any) (reply, error) {
	return s.call(ctx, s.batch.Script, sc, event, args...)
}

// write is run for a change that is acknowledged to the client (a hold,
// a confirm, a release, an extension, a cancel, an event's definition):
// with Options.MinReplicasAcked it is answered only once that many
// replicas have it, and is unavailable otherwise.
func (s *Store) write(ctx context.Context, sc *redis.Script, event string, args ...any) (reply, error) {
	return s.call(ctx, s.batch.DurableScript, sc, event, args...)
}

// call runs sc on event's keys through send (the batcher's Script or
// DurableScript).
func (s *Store) call(ctx context.Context, send func(context.Context, *redis.Script, []string, ...any) (any, error),
	sc *redis.Script, event string, args ...any) (reply, error) {
	argv := append([]any{s.ret, s.idem}, args...)
	raw, err := send(ctx, sc, []string{s.key(event, "meta")}, argv...)
	res, ok := raw.([]any)
	if err == nil && !ok {
		err = fmt.Errorf("redisstore: script reply is %T, not an array", raw)
	}
	if err != nil {
		if ctx.Err() != nil {
			return reply{}, ctx.Err()
		}
		s.log.Error("redisstore: script failed", "event", event, "err", err)
		return reply{}, &inventory.Error{Kind: inventory.ErrUnavailable, Message: "the inventory store is unavailable"}
	}
	if len(res) != 2 {
		return reply{}, fmt.Errorf("redisstore: malformed script reply %v", res)
	}
	flag, _ := res[0].(int64)
	body, _ := res[1].(string)
	r := reply{kv: strings.Split(body, "\x1f"), replayed: flag == 1}
	if len(r.kv) >= 2 && r.kv[0] == "err" {
		return r, errorFrom(r)
	}
	return r, nil
}

// errorFrom builds the error of an "err" reply.
func errorFrom(r reply) error {
	code := r.kv[1]
	kind := inventory.FromCode(code)
	if kind == nil {
		return fmt.Errorf("redisstore: unknown error code %q", code)
	}
	e := &inventory.Error{Kind: kind}
	if v := r.get("seats"); v != "" {
		e.Seats = strings.Split(v, ",")
	}
	if v := r.get("pools"); v != "" {
		e.Pools = strings.Split(v, ",")
	}
	e.Limit, e.Current, e.Available = int(r.int("limit")), int(r.int("current")), int(r.int("available"))
	switch kind {
	case inventory.ErrEventNotFound:
		e.Message = "the event is not defined"
	case inventory.ErrSeatNotFound:
		e.Message = "no such seat"
	case inventory.ErrSectionNotFound:
		e.Message = "the section is not defined"
	case inventory.ErrTierNotFound:
		e.Message = "no section has that tier"
	case inventory.ErrPoolNotFound:
		e.Message = "the GA pool is not defined"
	case inventory.ErrHoldNotFound:
		e.Message = "the hold does not exist"
	case inventory.ErrOrderNotFound:
		e.Message = "the order does not exist"
	case inventory.ErrSeatUnavailable:
		e.Message = "seats are held or sold"
	case inventory.ErrSoldOut:
		e.Message = "nothing is available"
	case inventory.ErrNotEnoughSeats:
		e.Message = "not enough seats together are available"
	case inventory.ErrUserLimit:
		e.Message = fmt.Sprintf("user may have at most %d seats in this event", e.Limit)
	case inventory.ErrHoldExpired:
		e.Message = "the hold expired at " + inventory.UnixMilli(r.int("e")).Format(time.RFC3339)
	case inventory.ErrHoldReleased:
		e.Message = "the hold was released"
	case inventory.ErrHoldConfirmed:
		e.Message = "the hold is confirmed; cancel its order instead"
	case inventory.ErrOrderCancelled:
		e.Message = "the order of this hold was cancelled"
	case inventory.ErrIdempotencyMismatch:
		e.Message = "the idempotency key was used for a different request"
	case inventory.ErrDefinitionConflict:
		e.Message = "the new definition drops or shrinks below seats or GA places that are held or sold"
	}
	return e
}

func badEvent(id string) error {
	if !inventory.ValidEventID(id) {
		return inventory.Errorf(inventory.ErrEventNotFound, "event %q is not defined", id)
	}
	return nil
}

// PutEvent implements inventory.Store.
func (s *Store) PutEvent(ctx context.Context, id string, def inventory.EventDef, actor string) (inventory.Event, error) {
	def, err := inventory.PrepareEvent(id, def, actor)
	if err != nil {
		return inventory.Event{}, err
	}
	raw, err := json.Marshal(def)
	if err != nil {
		return inventory.Event{}, err
	}
	if _, err := s.write(ctx, scriptDefine, id, string(raw), actor); err != nil {
		return inventory.Event{}, err
	}
	// The registry of events lives outside the event's slot; adding is
	// idempotent, so a retried PutEvent repairs a missed add.
	if err := s.c.SAdd(ctx, s.prefix+"events", id).Err(); err != nil {
		return inventory.Event{}, s.unavailable(err)
	}
	seats, ga := def.Totals()
	return inventory.Event{ID: id, EventDef: def, Seats: seats, GACapacity: ga}, nil
}

func (s *Store) unavailable(err error) error {
	s.log.Error("redisstore: command failed", "err", err)
	return &inventory.Error{Kind: inventory.ErrUnavailable, Message: "the inventory store is unavailable"}
}

// Event implements inventory.Store.
func (s *Store) Event(ctx context.Context, id string) (inventory.Event, error) {
	if err := badEvent(id); err != nil {
		return inventory.Event{}, err
	}
	r, err := s.run(ctx, scriptRead, id, "event", "")
	if err != nil {
		return inventory.Event{}, err
	}
	var def inventory.EventDef
	if err := json.Unmarshal([]byte(r.get("def")), &def); err != nil {
		return inventory.Event{}, s.unavailable(err)
	}
	seats, ga := def.Totals()
	return inventory.Event{ID: id, EventDef: def, Seats: seats, GACapacity: ga}, nil
}

// Events implements inventory.Store.
func (s *Store) Events(ctx context.Context) ([]string, error) {
	ids, err := s.c.SMembers(ctx, s.prefix+"events").Result()
	if err != nil {
		return nil, s.unavailable(err)
	}
	slices.Sort(ids)
	return ids, nil
}

var _ inventory.Store = (*Store)(nil)
