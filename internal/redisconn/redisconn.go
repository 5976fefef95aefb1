package redisconn

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/registry"
)

// Settings are a connection to a standalone Redis (URL), a Redis Cluster
// (Cluster) or a master watched by Sentinels (Sentinel), as a
// configuration section gives them. Plain data.
type Settings struct {
	// URL of a standalone Redis, redis:// or rediss://.
	URL string
	// Seed addresses of a Redis Cluster, host:port each.
	Cluster []string
	// Sentinel names the master and the Sentinels that watch it.
	Sentinel Sentinel
	// ACL user name and password; empty for the URL's or none.
	Username, Password string
	// Connections per node; 0 is the client library's default.
	PoolSize int
	// RequirePersistence: stores refuse a Redis that could lose
	// acknowledged writes on a restart, instead of only warning.
	RequirePersistence bool
	// MinReplicasAcked: the stores' durable writes are acknowledged
	// only after WAIT confirms that many replicas have them (0: not
	// waited for). See package redisbatch.
	MinReplicasAcked int
	// AckTimeout bounds that WAIT; 0 is DefaultAckTimeout.
	AckTimeout time.Duration
	// RetryFor bounds how long a command that Redis did not execute
	// (a refused dial, CLUSTERDOWN, TRYAGAIN, LOADING, MASTERDOWN,
	// READONLY, NOREPLICAS, MOVED, ASK) is retried while Redis fails over; 0 is
	// DefaultRetryFor.
	RetryFor time.Duration
}

// Sentinel is a master found through Redis Sentinel.
type Sentinel struct {
	// Master is the name the Sentinels monitor the master under.
	Master string
	// Addresses are Sentinels' host:port.
	Addresses []string
	// Username and Password of the Sentinels themselves (the data
	// nodes' are Settings.Username and Settings.Password).
	Username, Password string
}

// Defaults of Settings.
const (
	// DefaultAckTimeout bounds a WAIT for replicas.
	DefaultAckTimeout = time.Second
	// DefaultRetryFor is how long a command is retried across a
	// failover: Redis Cluster and Sentinel promote a replica within a
	// few seconds, and commands sent meanwhile wait rather than fail
	// while that lasts (bounded by their context too).
	DefaultRetryFor = 3 * time.Second
	// DialTimeout bounds one dial of a Redis node: a dead host must not
	// hold a command for the client library's default 5 s times 5
	// tries.
	DialTimeout = time.Second
	// reloadEvery bounds how stale a Redis Cluster client's view of
	// the slots can get without an error to prompt a reload.
	reloadEvery = 5 * time.Second
)

// Configured reports whether s names a Redis at all (a URL, a cluster or
// Sentinels).
func (s Settings) Configured() bool {
	return s.URL != "" || len(s.Cluster) > 0 || len(s.Sentinel.Addresses) > 0
}

// AckTimeoutOrDefault returns AckTimeout, or DefaultAckTimeout when 0.
func (s Settings) AckTimeoutOrDefault() time.Duration {
	if s.AckTimeout > 0 {
		return s.AckTimeout
	}
	return DefaultAckTimeout
}

// Conn is the client of one section's Settings, opened on the first
// Client call and shared by every caller after. Safe for concurrent use.
type Conn struct {
	settings Settings
	log      *slog.Logger

	mu     sync.Mutex
	client redis.UniversalClient
	closed bool
}

// New returns a Conn for s that has opened nothing yet; log gets
// go-redis's own messages at debug level (nil: discarded).
func New(s Settings, log *slog.Logger) *Conn {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Conn{settings: s, log: log}
}

// Settings returns the connection's settings.
func (c *Conn) Settings() Settings { return c.settings }

// Client returns the client, making it on the first call. A URL that
// does not parse is a *registry.SettingError for redis.url. Making a
// client dials nothing: the first command does.
func (c *Conn) Client() (redis.UniversalClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, &registry.SettingError{Key: "redis", Err: fmt.Errorf("redisconn: closed")}
	}
	if c.client != nil {
		return c.client, nil
	}
	redisLog.Store(c.log)
	redisLogOnce.Do(func() { redis.SetLogger(redisLogger{}) })
	s := c.settings
	retryFor := s.RetryFor
	if retryFor <= 0 {
		retryFor = DefaultRetryFor
	}
	if len(s.Cluster) > 0 {
		// Connection errors do not make go-redis reload the slots (only
		// MOVED and ASK do, and a dead master sends neither): without
		// the hook's reload the client dials a dead master until its
		// periodic reload, 60 s by default.
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: s.Cluster, Username: s.Username,
			Password: s.Password, PoolSize: s.PoolSize, DialTimeout: DialTimeout, DialerRetries: 1,
			ClusterStateReloadInterval: reloadEvery})
		cc.AddHook(&retryHook{retryFor: retryFor, reload: func() { cc.ReloadState(context.Background()) }})
		c.client = cc
		return c.client, nil
	}
	if len(s.Sentinel.Addresses) > 0 {
		fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: s.Sentinel.Master,
			SentinelAddrs: s.Sentinel.Addresses, SentinelUsername: s.Sentinel.Username,
			SentinelPassword: s.Sentinel.Password, Username: s.Username, Password: s.Password,
			PoolSize: s.PoolSize, DialTimeout: DialTimeout, DialerRetries: 1})
		fc.AddHook(&retryHook{retryFor: retryFor})
		c.client = fc
		return c.client, nil
	}
	opts, err := redis.ParseURL(s.URL)
	if err != nil {
		return nil, &registry.SettingError{Key: "redis.url", Err: err}
	}
	if s.Username != "" {
		opts.Username = s.Username
	}
	if s.Password != "" {
		opts.Password = s.Password
	}
	if s.PoolSize > 0 {
		opts.PoolSize = s.PoolSize
	}
	opts.DialTimeout, opts.DialerRetries = DialTimeout, 1
	cl := redis.NewClient(opts)
	cl.AddHook(&retryHook{retryFor: retryFor})
	c.client = cl
	return c.client, nil
}

// Fail returns err as a *registry.SettingError naming the setting that
// could not be used (redis.url or redis.cluster) with the address but
// never the password: for a store that could not use the client.
func (c *Conn) Fail(err error) error {
	if len(c.settings.Cluster) > 0 {
		return &registry.SettingError{Key: "redis.cluster", Value: strings.Join(c.settings.Cluster, ","), Err: err}
	}
	if len(c.settings.Sentinel.Addresses) > 0 {
		return &registry.SettingError{Key: "redis.sentinel", Value: c.settings.Sentinel.Master + "@" +
			strings.Join(c.settings.Sentinel.Addresses, ","), Err: err}
	}
	return &registry.SettingError{Key: "redis.url", Value: Host(c.settings.URL), Err: err}
}

// Ping checks the client, if one was made (see the function Ping); a
// Conn that no store used has nothing to check and answers nil.
func (c *Conn) Ping(ctx context.Context) error {
	c.mu.Lock()
	client := c.client
	c.mu.Unlock()
	if client == nil {
		return nil
	}
	if err := Ping(ctx, client); err != nil {
		return c.Fail(err)
	}
	return nil
}

// Close closes the client if one was made; later Client calls fail.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.client == nil {
		return nil
	}
	err := c.client.Close()
	c.client = nil
	return err
}

// Host returns the host:port of a Redis URL, without user name or
// password, for messages; "" when it does not parse.
func Host(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

// redisLog receives go-redis's own messages (a pool's failed dials),
// which it would otherwise print to the process's stderr on its own: the
// error that matters is returned to the caller and said once. The last
// logger given to a Conn that made a client wins; they are debug
// messages.
var (
	redisLog     atomic.Pointer[slog.Logger]
	redisLogOnce sync.Once
)

type redisLogger struct{}

func (redisLogger) Printf(_ context.Context, format string, v ...any) {
	if l := redisLog.Load(); l != nil {
		l.Debug("redis: " + fmt.Sprintf(format, v...))
	}
}
