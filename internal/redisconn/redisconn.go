package redisconn

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/registry"
)

// Settings are a connection to a standalone Redis (URL) or a Redis
// Cluster (Cluster), as a configuration section gives them. Plain data.
type Settings struct {
	// URL of a standalone Redis, redis:// or rediss://.
	URL string
	// Seed addresses of a Redis Cluster, host:port each.
	Cluster []string
	// ACL user name and password; empty for the URL's or none.
	Username, Password string
	// Connections per node; 0 is the client library's default.
	PoolSize int
	// RequirePersistence: stores refuse a Redis that could lose
	// acknowledged writes on a restart, instead of only warning.
	RequirePersistence bool
}

// Configured reports whether s names a Redis at all (a URL or a cluster).
func (s Settings) Configured() bool { return s.URL != "" || len(s.Cluster) > 0 }

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
	if len(s.Cluster) > 0 {
		c.client = redis.NewClusterClient(&redis.ClusterOptions{Addrs: s.Cluster, Username: s.Username,
			Password: s.Password, PoolSize: s.PoolSize})
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
	c.client = redis.NewClient(opts)
	return c.client, nil
}

// Fail returns err as a *registry.SettingError naming the setting that
// could not be used (redis.url or redis.cluster) with the address but
// never the password: for a store that could not use the client.
func (c *Conn) Fail(err error) error {
	if len(c.settings.Cluster) > 0 {
		return &registry.SettingError{Key: "redis.cluster", Value: strings.Join(c.settings.Cluster, ","), Err: err}
	}
	return &registry.SettingError{Key: "redis.url", Value: Host(c.settings.URL), Err: err}
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
