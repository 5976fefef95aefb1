package config

import (
	"time"

	"github.com/waitroom/waitroom/internal/redisconn"
)

// Config is the whole configuration file. Each section is one field; a
// section the file leaves out keeps its defaults. A Config is plain data:
// safe to read from several goroutines, not to change while others read.
type Config struct {
	// Waitroom's own log output.
	Log Log `yaml:"log"`
	// The seat-hold sidecar that origins call to hold, confirm and release
	// seats (waitroom inventory, or waitroom serve with
	// serve.with_inventory).
	Inventory Inventory `yaml:"inventory"`
	// The waiting-room reverse proxy (waitroom serve): listeners, limits,
	// token keys, cookies, bypass rules and rate limits.
	Serve Serve `yaml:"serve"`
	// The operator API, /metrics, /healthz and /readyz, on a listener of
	// their own.
	Admin Admin `yaml:"admin"`
	// Where the queues live: the admission store shared by every replica
	// of the proxy.
	Admission Admission `yaml:"admission"`
	// The sites waitroom forwards to, one or more (the first is the
	// default). Required by waitroom serve.
	Origins []Origin `yaml:"origins"`
	// Which paths need which event's pass, and which origin serves them.
	// Routes match the request's normalised path (dot-segments removed,
	// "//" collapsed, unreserved escapes decoded), which is exactly the
	// path the origin receives; ASCII case, a segment's trailing dots and
	// a directory prefix's trailing "/" are ignored unless a route is
	// case_sensitive. The first match wins; see unmatched for the rest.
	// waitroom check-config prints the effective table.
	Routes []Route `yaml:"routes"`
	// What happens to a path no route matches: action pass (the default:
	// forwarded to origin, or the first origin, without a queue), queue
	// or block (with event: every other path needs that event's pass).
	Unmatched Unmatched `yaml:"unmatched"`
	// The on-sales with a waiting room: schedule, queue, admission and the
	// page visitors see.
	Events []Event `yaml:"events"`
	// Bot defence shared by the events whose challenge is on: the
	// challenge key, risk signals, external scorer, CAPTCHA providers.
	BotDefence BotDefence `yaml:"bot_defence"`
	// How the origin tells waitroom who is logged in, for the events whose
	// identity is optional or required (one place per account).
	Identity Identity `yaml:"identity"`
	// Event sinks: plugins told of the life of a sale: joins, admissions,
	// no-shows, holds, sales, releases, sell-outs, pauses and mode
	// changes (webhook).
	Sinks []Sink `yaml:"sinks"`
}

// Log configures waitroom's own log output.
type Log struct {
	// Least severe level written: debug, info, warn or error.
	Level LogLevel `yaml:"level"`
	// Line format: text (key=value pairs) or json (one object per line).
	Format LogFormat `yaml:"format"`
}

// LogLevel is a value of log.level.
type LogLevel string

// Values of log.level.
const (
	LevelDebug LogLevel = "debug"
	LevelInfo  LogLevel = "info"
	LevelWarn  LogLevel = "warn"
	LevelError LogLevel = "error"
)

// LogFormat is a value of log.format.
type LogFormat string

// Values of log.format.
const (
	FormatText LogFormat = "text"
	FormatJSON LogFormat = "json"
)

// Inventory configures the seat-hold sidecar.
type Inventory struct {
	// Address the sidecar's HTTP API listens on, host:port. Keep it on a
	// private interface: only origins should reach it.
	Listen string `yaml:"listen"`
	// Bearer token every API request must carry. Take it from the
	// environment (${WAITROOM_INVENTORY_TOKEN}), never write it inline; at
	// least 16 characters (openssl rand -hex 32 makes a good one).
	APIToken string `yaml:"api_token"`
	// Run without a token, so anyone who reaches the listener can hold and
	// sell seats. For tests and local development only.
	InsecureNoAuth bool `yaml:"insecure_no_auth"`
	// Where seat state lives: embedded (in this process, journaled to
	// data_dir) or redis (shared by several sidecars).
	Store StoreKind `yaml:"store"`
	// Directory of the embedded store's journals and snapshots. It is
	// created if missing and locked against a second process.
	DataDir string `yaml:"data_dir"`
	// Connection to Redis, used with store: redis.
	Redis Redis `yaml:"redis"`
	// Background expiry of holds whose time has passed. Only tidies up:
	// an expired hold is treated as released even before it is reaped.
	Reaper Reaper `yaml:"reaper"`
	// How long an idempotency key is remembered, so that a retried
	// request gets the first answer. At least 24h.
	IdempotencyTTL Duration `yaml:"idempotency_ttl"`
	// How long a released or expired hold can still be read.
	HoldRetention Duration `yaml:"hold_retention"`
	// Largest request body the API accepts, in bytes (1 KiB to 256 MiB).
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
}

// StoreKind is a value of admission.store or inventory.store: the name
// of a store backend registered in admission.Stores or inventory.Stores
// (the built-in ones are listed in package backends).
type StoreKind string

// The built-in store backends' names.
const (
	StoreEmbedded StoreKind = "embedded"
	StoreRedis    StoreKind = "redis"
)

// Redis configures a connection to a standalone Redis, a Redis Cluster,
// or a master found through Redis Sentinel. Whichever it is, the client
// follows a failover: commands Redis did not run are retried for up to
// 3 s, a Cluster client reloading its slots first.
type Redis struct {
	// Standalone Redis as a URL, redis://host:port/db or rediss:// for
	// TLS. Set one of url, cluster and sentinel.
	URL string `yaml:"url"`
	// Redis Cluster seed addresses, host:port each. Set one of url,
	// cluster and sentinel.
	Cluster []string `yaml:"cluster"`
	// Redis Sentinel: the master's name and the Sentinels' addresses.
	// Set one of url, cluster and sentinel.
	Sentinel Sentinel `yaml:"sentinel"`
	// ACL user name; empty for the default user.
	Username string `yaml:"username"`
	// Password, from the environment (${REDIS_PASSWORD}); empty for none.
	Password string `yaml:"password"`
	// Refuse to start when Redis has appendonly off, so that a restart of
	// Redis could lose sales or queued visitors, or aof-load-truncated
	// yes, so that a restart after a crash could apply half a change; when
	// false, such a Redis only gets a loud warning.
	RequirePersistence bool `yaml:"require_persistence"`
	// Connections per Redis node; 0 uses the client library's default
	// (10 per CPU).
	PoolSize int `yaml:"pool_size"`
	// Durable writes (joins, seeds, draws, serving counters, revocations
	// and bars, invites, account places, operator controls; holds,
	// confirms, releases, extensions, cancels) are acknowledged only
	// after WAIT confirms that this many replicas of the master have
	// them, so a failover cannot take them back; when fewer confirm
	// within ack_timeout the call fails (503) and claims nothing. 0
	// waits for none: a write acknowledged just before the master dies
	// may be missing on the promoted replica. Keep it below the number
	// of replicas per master, or writes fail while one is down.
	MinReplicasAcked int `yaml:"min_replicas_acked"`
	// How long a durable write waits for min_replicas_acked replicas.
	AckTimeout Duration `yaml:"ack_timeout"`
}

// Sentinel names a master that Redis Sentinels watch.
type Sentinel struct {
	// Name the Sentinels monitor the master under.
	Master string `yaml:"master"`
	// Sentinels' addresses, host:port each.
	Addresses []string `yaml:"addresses"`
	// ACL user name on the Sentinels; empty for none.
	Username string `yaml:"username"`
	// Password of the Sentinels (the data nodes' is redis.password),
	// from the environment; empty for none.
	Password string `yaml:"password"`
}

// Most replicas redis.min_replicas_acked may ask for.
const MaxMinReplicasAcked = 16

// DefaultRedisAckTimeout is redis.ack_timeout's default.
const DefaultRedisAckTimeout = redisconn.DefaultAckTimeout

// defaultRedis is a Redis section's defaults (no Redis named).
func defaultRedis() Redis {
	return Redis{Cluster: []string{}, Sentinel: Sentinel{Addresses: []string{}},
		AckTimeout: Duration(DefaultRedisAckTimeout)}
}

// Reaper configures the background expiry of holds.
type Reaper struct {
	// Time between passes.
	Interval Duration `yaml:"interval"`
	// Most holds expired per event in one step of a pass (1 to 100000).
	Batch int `yaml:"batch"`
}

// Defaults applied to every key a configuration file leaves out.
const (
	DefaultLogLevel  = LevelInfo
	DefaultLogFormat = FormatText

	DefaultInventoryListen  = "127.0.0.1:8082"
	DefaultInventoryStore   = StoreEmbedded
	DefaultInventoryDataDir = "./waitroom-data"
	DefaultReapInterval     = time.Second
	DefaultReapBatch        = 500
	DefaultIdempotencyTTL   = 24 * time.Hour
	DefaultHoldRetention    = time.Hour
	DefaultMaxBodyBytes     = 8 << 20
)

// Limits that Validate enforces.
const (
	MinAPITokenLength = 16
	MinIdempotencyTTL = 24 * time.Hour
	MinMaxBodyBytes   = 1 << 10
	MaxMaxBodyBytes   = 256 << 20
	MaxReapBatch      = 100_000
)

// Default returns a new Config holding every default. It is not valid on
// its own: the inventory needs an api_token (or insecure_no_auth), and
// waitroom serve needs an origin, a signing secret and an admin token.
// List elements (origins, events, verification keys) a file adds start
// from DefaultOrigin, DefaultEvent and DefaultVerifyKey.
func Default() *Config {
	return &Config{
		Log: Log{
			Level:  DefaultLogLevel,
			Format: DefaultLogFormat,
		},
		Inventory: Inventory{
			Listen:  DefaultInventoryListen,
			Store:   DefaultInventoryStore,
			DataDir: DefaultInventoryDataDir,
			Redis:   defaultRedis(),
			Reaper: Reaper{
				Interval: Duration(DefaultReapInterval),
				Batch:    DefaultReapBatch,
			},
			IdempotencyTTL: Duration(DefaultIdempotencyTTL),
			HoldRetention:  Duration(DefaultHoldRetention),
			MaxBodyBytes:   DefaultMaxBodyBytes,
		},
		Serve:     defaultServe(),
		Admin:     Admin{Listen: DefaultAdminListen, MaxConnections: DefaultAdminMaxConnections},
		Admission: defaultAdmission(),
		Origins:   []Origin{},
		Routes:    []Route{},
		BotDefence: BotDefence{
			ChallengeTTL:  Duration(DefaultChallengeTTL),
			SuspectMemory: Duration(DefaultSuspectMemory),
			Captcha:       []NamedPlugin{},
		},
		Identity: DefaultIdentity(),
		Sinks:    []Sink{},
		Events:   []Event{},
	}
}
