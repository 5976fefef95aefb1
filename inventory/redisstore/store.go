package redisstore

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/redisbatch"
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
	for _, n := range []string{"define", "hold", "confirm", "release", "cancel", "read"} {
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
	s.batch = redisbatch.New(s.c, opts.Pipelines)
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

// Ping implements inventory.Store.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.c.Ping(ctx).Err(); err != nil {
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
	argv := append([]any{s.ret, s.idem}, args...)
	keys := []string{s.key(event, "meta")}
	cmd, err := s.batch.Do(ctx, func(p redis.Pipeliner) redis.Cmder {
		return sc.EvalSha(context.Background(), p, keys, argv...)
	})
	var raw any
	switch {
	case err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT"):
		// The server forgot its scripts (a restart, SCRIPT FLUSH, a new
		// cluster node): Run loads the script with EVAL.
		raw, err = sc.Run(ctx, s.c, keys, argv...).Result()
	case err == nil:
		raw = cmd.(*redis.Cmd).Val()
	}
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
	if _, err := s.run(ctx, scriptDefine, id, string(raw), actor); err != nil {
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

// ttlMillis is the hold's TTL for the script; 0 means the event's default.
func ttlMillis(req *inventory.HoldRequest) int64 {
	switch {
	case req.TTL > 0:
		return req.TTL.Milliseconds()
	case req.TTLSeconds > 0:
		return int64(req.TTLSeconds) * 1000
	}
	return 0
}

// Hold implements inventory.Store.
func (s *Store) Hold(ctx context.Context, id string, req inventory.HoldRequest) (inventory.Hold, error) {
	if err := req.Validate(); err != nil {
		return inventory.Hold{}, err
	}
	if err := badEvent(id); err != nil {
		return inventory.Hold{}, err
	}
	var kind, target string
	qty := 0
	switch {
	case req.Seats != nil:
		kind, target, qty = "seats", inventory.JoinSeats(req.Seats), len(req.Seats)
	case req.Best != nil && req.Best.Section != "":
		kind, target, qty = "section", req.Best.Section, req.Best.Quantity
	case req.Best != nil:
		kind, target, qty = "tier", req.Best.Tier, req.Best.Quantity
	default:
		kind, target, qty = "ga", req.GA.Pool, req.GA.Quantity
	}
	fp := ""
	if req.IdempotencyKey != "" {
		fp = req.Fingerprint()
	}
	r, err := s.run(ctx, scriptHold, id, inventory.NewID(inventory.HoldIDPrefix), req.User, kind, target, qty,
		ttlMillis(&req), req.IdempotencyKey, fp, req.Actor)
	if err != nil {
		return inventory.Hold{}, err
	}
	return holdFrom(id, r), nil
}

func holdFrom(event string, r reply) inventory.Hold {
	return inventory.Hold{ID: r.get("id"), Event: event, User: r.get("u"), Seats: inventory.SplitSeats(r.get("seats")),
		Pool: r.get("pool"), Quantity: int(r.int("q")), PriceCents: r.int("price"),
		CreatedAt: inventory.UnixMilli(r.int("c")), ExpiresAt: inventory.UnixMilli(r.int("e")),
		Status: inventory.HoldStatus(r.get("st")), OrderID: r.get("o"), Replayed: r.replayed}
}

func orderFrom(event string, r reply) inventory.Order {
	o := inventory.Order{ID: r.get("id"), HoldID: r.get("h"), Event: event, User: r.get("u"),
		Seats: inventory.SplitSeats(r.get("seats")), Pool: r.get("pool"), Quantity: int(r.int("q")),
		PriceCents: r.int("price"), PaymentRef: r.get("pay"), Status: inventory.OrderStatus(r.get("st")),
		ConfirmedAt: inventory.UnixMilli(r.int("c")), Replayed: r.replayed}
	if x := r.int("x"); x != 0 {
		t := inventory.UnixMilli(x)
		o.CancelledAt = &t
	}
	return o
}

// GetHold implements inventory.Store.
func (s *Store) GetHold(ctx context.Context, id, hold string) (inventory.Hold, error) {
	if err := badEvent(id); err != nil {
		return inventory.Hold{}, err
	}
	if !inventory.ValidRecordID(hold) {
		return inventory.Hold{}, inventory.Errorf(inventory.ErrHoldNotFound, "hold %q does not exist", hold)
	}
	r, err := s.run(ctx, scriptRead, id, "hold", hold)
	if err != nil {
		return inventory.Hold{}, err
	}
	return holdFrom(id, r), nil
}

// Confirm implements inventory.Store.
func (s *Store) Confirm(ctx context.Context, id, hold string, req inventory.ConfirmRequest) (inventory.Order, error) {
	if err := req.Validate(); err != nil {
		return inventory.Order{}, err
	}
	if err := badEvent(id); err != nil {
		return inventory.Order{}, err
	}
	if !inventory.ValidRecordID(hold) {
		return inventory.Order{}, inventory.Errorf(inventory.ErrHoldNotFound, "hold %q does not exist", hold)
	}
	r, err := s.run(ctx, scriptConfirm, id, hold, inventory.NewID(inventory.OrderIDPrefix), req.PaymentRef,
		req.IdempotencyKey, req.Fingerprint(hold), req.Actor)
	if err != nil {
		return inventory.Order{}, err
	}
	return orderFrom(id, r), nil
}

// Release implements inventory.Store.
func (s *Store) Release(ctx context.Context, id, hold string, req inventory.ReleaseRequest) (inventory.Release, error) {
	if err := req.Validate(); err != nil {
		return inventory.Release{}, err
	}
	if err := badEvent(id); err != nil {
		return inventory.Release{}, err
	}
	if !inventory.ValidRecordID(hold) {
		return inventory.Release{}, inventory.Errorf(inventory.ErrHoldNotFound, "hold %q does not exist", hold)
	}
	r, err := s.run(ctx, scriptRelease, id, hold, req.IdempotencyKey, req.Fingerprint(hold), req.Actor)
	if err != nil {
		return inventory.Release{}, err
	}
	return inventory.Release{HoldID: r.get("id"), Event: id, Status: "released",
		HoldStatus: inventory.HoldStatus(r.get("st")), Replayed: r.replayed}, nil
}

// Cancel implements inventory.Store.
func (s *Store) Cancel(ctx context.Context, id, order string, req inventory.CancelRequest) (inventory.Order, error) {
	if err := req.Validate(); err != nil {
		return inventory.Order{}, err
	}
	if err := badEvent(id); err != nil {
		return inventory.Order{}, err
	}
	if !inventory.ValidRecordID(order) {
		return inventory.Order{}, inventory.Errorf(inventory.ErrOrderNotFound, "order %q does not exist", order)
	}
	r, err := s.run(ctx, scriptCancel, id, order, req.Reason, req.Actor)
	if err != nil {
		return inventory.Order{}, err
	}
	return orderFrom(id, r), nil
}

// GetOrder implements inventory.Store.
func (s *Store) GetOrder(ctx context.Context, id, order string) (inventory.Order, error) {
	if err := badEvent(id); err != nil {
		return inventory.Order{}, err
	}
	if !inventory.ValidRecordID(order) {
		return inventory.Order{}, inventory.Errorf(inventory.ErrOrderNotFound, "order %q does not exist", order)
	}
	r, err := s.run(ctx, scriptRead, id, "order", order)
	if err != nil {
		return inventory.Order{}, err
	}
	return orderFrom(id, r), nil
}

// counts parses "total|held|sold".
func counts(v string) (total int, c inventory.Counts) {
	parts := strings.Split(v, "|")
	if len(parts) != 3 {
		return 0, c
	}
	total, _ = strconv.Atoi(parts[0])
	c.Held, _ = strconv.Atoi(parts[1])
	c.Sold, _ = strconv.Atoi(parts[2])
	c.Available = total - c.Held - c.Sold
	return total, c
}

// Availability implements inventory.Store.
func (s *Store) Availability(ctx context.Context, id string) (inventory.Availability, error) {
	if err := badEvent(id); err != nil {
		return inventory.Availability{}, err
	}
	r, err := s.run(ctx, scriptRead, id, "availability", "")
	if err != nil {
		return inventory.Availability{}, err
	}
	a := inventory.Availability{Event: id, Sections: map[string]inventory.Counts{}, GA: map[string]inventory.PoolCounts{}}
	for i := 2; i+1 < len(r.kv); i += 2 {
		name, v := r.kv[i], r.kv[i+1]
		total, c := counts(v)
		switch {
		case strings.HasPrefix(name, "s:"):
			a.Sections[name[2:]] = c
		case strings.HasPrefix(name, "p:"):
			a.GA[name[2:]] = inventory.PoolCounts{Capacity: total, Counts: c}
		default:
			continue
		}
		a.Available += c.Available
		a.Held += c.Held
		a.Sold += c.Sold
	}
	return a, nil
}

// SeatMap implements inventory.Store.
func (s *Store) SeatMap(ctx context.Context, id, section string) (inventory.SeatMap, error) {
	if err := badEvent(id); err != nil {
		return inventory.SeatMap{}, err
	}
	r, err := s.run(ctx, scriptRead, id, "seats", section)
	if err != nil {
		return inventory.SeatMap{}, err
	}
	m := inventory.SeatMap{Event: id, Section: section, Seats: []inventory.SeatState{}}
	for i := 2; i+1 < len(r.kv); i += 2 {
		row, st := r.kv[i], r.kv[i+1]
		for k := 0; k < len(st); k++ {
			status := inventory.SeatAvailable
			switch st[k] {
			case 'h':
				status = inventory.SeatHeld
			case 's':
				status = inventory.SeatSold
			}
			m.Seats = append(m.Seats, inventory.SeatState{ID: inventory.SeatID(section, row, k+1), Status: status})
		}
	}
	return m, nil
}

// Reap implements inventory.Store.
func (s *Store) Reap(ctx context.Context, id string, max int) (int, error) {
	if err := badEvent(id); err != nil {
		return 0, err
	}
	if max <= 0 {
		max = inventory.DefaultReapBatch
	}
	r, err := s.run(ctx, scriptRead, id, "reap", max)
	if err != nil {
		return 0, err
	}
	return int(r.int("n")), nil
}

var streamID = regexp.MustCompile(`^[0-9]{1,20}-[0-9]{1,20}$`)

// Audit implements inventory.Store. Cursors are stream entry ids.
func (s *Store) Audit(ctx context.Context, id, after string, limit int) (inventory.AuditPage, error) {
	if err := badEvent(id); err != nil {
		return inventory.AuditPage{}, err
	}
	if after != "" && !streamID.MatchString(after) {
		return inventory.AuditPage{}, inventory.Errorf(inventory.ErrInvalid, "after: not a cursor of this event's audit stream")
	}
	if limit <= 0 {
		limit = inventory.DefaultAuditPage
	}
	limit = min(limit, inventory.MaxAuditPage)
	// Expire what is due first, so that expiries show up in the stream.
	if _, err := s.run(ctx, scriptRead, id, "sync", ""); err != nil {
		return inventory.AuditPage{}, err
	}
	start := "-"
	if after != "" {
		start = "(" + after
	}
	msgs, err := s.c.XRangeN(ctx, s.key(id, "audit"), start, "+", int64(limit)).Result()
	if err != nil {
		return inventory.AuditPage{}, s.unavailable(err)
	}
	page := inventory.AuditPage{Event: id, Entries: make([]inventory.AuditEntry, 0, len(msgs)), Next: after}
	for _, m := range msgs {
		page.Entries = append(page.Entries, auditEntry(m))
		page.Next = m.ID
	}
	return page, nil
}

// auditEntry decodes a stream entry: one field "e" holding action, time,
// actor, user, hold, order, seats, pool and quantity (lua/prelude.lua).
func auditEntry(m redis.XMessage) inventory.AuditEntry {
	raw, _ := m.Values["e"].(string)
	var f [9]string
	for i, part := range strings.SplitN(raw, "\x1f", len(f)) {
		f[i] = part
	}
	at, _ := strconv.ParseInt(f[1], 10, 64)
	q, _ := strconv.Atoi(f[8])
	var seats []string
	if f[6] != "" {
		seats = strings.Split(f[6], ",")
	}
	return inventory.AuditEntry{ID: m.ID, At: inventory.UnixMilli(at), Action: f[0], Actor: f[2], User: f[3],
		HoldID: f[4], OrderID: f[5], Seats: seats, Pool: f[7], Quantity: q}
}

var _ inventory.Store = (*Store)(nil)
