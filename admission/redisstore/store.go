package redisstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/redisbatch"
	"github.com/waitroom/waitroom/internal/redisconn"
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
	scriptPublish     = load("publish")
	scriptBar         = load("bar")
	scriptBars        = load("bars")
	scriptGrant       = load("grant")
	scriptTake        = load("take")
	scriptMinute      = load("minute")
	scriptRecord      = load("record")
	scriptOnce        = load("once")
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
	// ReplayPrefix starts the keys of the challenge replay guard sharing
	// this Redis (default Prefix + "replay:", as the wiring sets it):
	// the join's script spends the guard's own key for a challenge, so
	// that replicas spending through the guard (older ones, during a
	// rolling upgrade) and through the store spend one value.
	ReplayPrefix string
	// Pipelines is how many pipelines of AppendMember and Claim commands
	// may be in flight at once (default 4).
	Pipelines int
	// Logger receives warnings; slog.Default when nil.
	Logger *slog.Logger
	// RequirePersistence makes New fail when a Redis master has
	// appendonly off or aof-load-truncated yes; otherwise New only logs
	// an error.
	RequirePersistence bool
	// MinReplicasAcked: the durable writes (admission.Store's
	// Durability paragraph) are acknowledged only after WAIT confirms
	// that many replicas have them, and fail with admission.ErrStoreDown
	// when fewer do within AckTimeout. 0 waits for none.
	MinReplicasAcked int
	// AckTimeout bounds that WAIT (default redisconn.DefaultAckTimeout).
	AckTimeout time.Duration
}

// Store is the Redis admission store. It is safe for concurrent use, by
// any number of processes.
type Store struct {
	c      redis.UniversalClient
	prefix string
	// replayPrefix starts the replay guard's keys (Options.ReplayPrefix).
	replayPrefix string
	// cluster: the client is a Cluster's, whose store leaves one-time
	// values to the replay guard (SpendsOnce).
	cluster bool
	log     *slog.Logger
	batch   *redisbatch.Batcher
	acks    int // MinReplicasAcked
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
	if opts.ReplayPrefix == "" {
		opts.ReplayPrefix = opts.Prefix + "replay:"
	}
	s := &Store{c: opts.Client, prefix: opts.Prefix, replayPrefix: opts.ReplayPrefix, log: opts.Logger, acks: opts.MinReplicasAcked}
	_, s.cluster = opts.Client.(*redis.ClusterClient)
	if err := s.c.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("redisstore: cannot reach Redis: %w", err)
	}
	if err := redispersist.Enforce(ctx, s.c, s.log, persistence, opts.RequirePersistence); err != nil {
		return nil, fmt.Errorf("redisstore: %w", err)
	}
	if opts.AckTimeout <= 0 {
		opts.AckTimeout = redisconn.DefaultAckTimeout
	}
	s.batch = redisbatch.NewAcked(s.c, opts.Pipelines, redisbatch.Ack{Replicas: opts.MinReplicasAcked,
		Timeout: opts.AckTimeout, RetryFor: redisconn.DefaultRetryFor, NotExecuted: redisconn.NotExecuted})
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

// durable runs a write that admission.Store promises durable: through
// the batcher's Durable path, which waits for MinReplicasAcked replicas.
// key is the first key the command touches (its master runs the WAIT).
func (s *Store) durable(ctx context.Context, key string, queue func(p redis.Pipeliner) redis.Cmder) (redis.Cmder, error) {
	return s.batch.Durable(ctx, key, queue)
}

// script runs a script that writes durably: by SHA, with EVAL when the
// server answers NOSCRIPT (a restart, a promoted replica), and waits for
// replicas as durable does.
func (s *Store) script(ctx context.Context, sc *redis.Script, keys []string, args ...any) *redis.Cmd {
	if s.acks == 0 {
		return sc.Run(ctx, s.c, keys, args...)
	}
	return redis.NewCmdResult(s.batch.DurableScript(ctx, sc, keys, args...))
}

// do runs a command that writes durably (args[1] is its key) and waits
// for replicas as durable does.
func (s *Store) do(ctx context.Context, args ...any) *redis.Cmd {
	if s.acks == 0 {
		return s.c.Do(ctx, args...)
	}
	cmd, err := s.durable(ctx, args[1].(string), func(p redis.Pipeliner) redis.Cmder {
		return p.Do(context.Background(), args...)
	})
	return asCmd(ctx, cmd, err)
}

func asCmd(ctx context.Context, cmd redis.Cmder, err error) *redis.Cmd {
	if c, ok := cmd.(*redis.Cmd); ok && err == nil {
		return c
	}
	c := redis.NewCmd(ctx)
	c.SetErr(err)
	return c
}

var (
	_ admission.Store     = (*Store)(nil)
	_ admission.OnceStore = (*Store)(nil)
)
