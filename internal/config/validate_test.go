package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/memstore"
)

const testToken = "0123456789abcdef-secret-token"

// valid returns a configuration that passes Validate.
func valid() *Config {
	c := Default()
	c.Inventory.APIToken = testToken
	return c
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(c *Config)
		want   []string // every problem, in order; none for valid
	}{
		{"defaults with a token", func(c *Config) {}, nil},
		{"defaults without a token", func(c *Config) { c.Inventory.APIToken = "" }, []string{
			"inventory.api_token: set inventory.api_token (e.g. from ${WAITROOM_INVENTORY_TOKEN}) or insecure_no_auth: true"}},
		{"insecure without a token", func(c *Config) {
			c.Inventory.APIToken = ""
			c.Inventory.InsecureNoAuth = true
		}, nil},
		{"insecure with a token", func(c *Config) { c.Inventory.InsecureNoAuth = true }, []string{
			"inventory.insecure_no_auth: is true while api_token is set: remove one of them"}},
		{"short token", func(c *Config) { c.Inventory.APIToken = "0123456789abcde" }, []string{
			"inventory.api_token: must be at least 16 characters (got 15); openssl rand -hex 32 makes a good one"}},
		{"token of exactly 16", func(c *Config) { c.Inventory.APIToken = "0123456789abcdef" }, nil},
		{"token with a trailing newline", func(c *Config) { c.Inventory.APIToken = testToken + "\n" }, []string{
			"inventory.api_token: starts or ends with white space (a trailing newline from a secrets file?)"}},
		{"token with a space inside", func(c *Config) { c.Inventory.APIToken = "0123456789 abcdef" }, []string{
			"inventory.api_token: must be printable ASCII without spaces: it travels in an HTTP header"}},
		{"token with non-ASCII", func(c *Config) { c.Inventory.APIToken = "0123456789abcdefé" }, []string{
			"inventory.api_token: must be printable ASCII without spaces: it travels in an HTTP header"}},

		{"log level and format", func(c *Config) {
			c.Log.Level = "INFO"
			c.Log.Format = ""
		}, []string{
			`log.level: must be debug, info, warn or error (got "INFO")`,
			`log.format: must be text or json (got "")`}},
		{"every log level", func(c *Config) { c.Log.Level = LevelDebug }, nil},

		{"listen without port", func(c *Config) { c.Inventory.Listen = "localhost" }, []string{
			`inventory.listen: must be host:port, such as 127.0.0.1:8082 (got "localhost")`}},
		{"listen on all interfaces", func(c *Config) { c.Inventory.Listen = ":8082" }, nil},
		{"listen on IPv6", func(c *Config) { c.Inventory.Listen = "[::1]:8082" }, nil},
		{"listen on any free port", func(c *Config) { c.Inventory.Listen = "127.0.0.1:0" }, nil},
		{"listen on a named port", func(c *Config) { c.Inventory.Listen = "127.0.0.1:http" }, []string{
			`inventory.listen: must be host:port, such as 127.0.0.1:8082 (port "http" is not a number from 0 to 65535)`}},
		{"empty listen", func(c *Config) { c.Inventory.Listen = "" }, []string{
			`inventory.listen: must be host:port, such as 127.0.0.1:8082 (got "")`}},

		{"unknown store", func(c *Config) { c.Inventory.Store = "Redis" }, []string{
			`inventory.store: must be embedded or redis (got "Redis")`}},
		{"embedded without data_dir", func(c *Config) { c.Inventory.DataDir = "" }, []string{
			"inventory.data_dir: must be set with store: embedded"}},
		{"redis without data_dir", func(c *Config) {
			c.Inventory.Store = StoreRedis
			c.Inventory.DataDir = ""
			c.Inventory.Redis.URL = "redis://127.0.0.1:6379/0"
		}, nil},
		{"redis with neither url nor cluster", func(c *Config) { c.Inventory.Store = StoreRedis }, []string{
			"inventory.redis: set url (standalone Redis) or cluster (Redis Cluster seed addresses) with store: redis"}},
		{"redis with both", func(c *Config) {
			c.Inventory.Store = StoreRedis
			c.Inventory.Redis.URL = "redis://127.0.0.1:6379/0"
			c.Inventory.Redis.Cluster = []string{"10.0.0.1:7000"}
		}, []string{"inventory.redis: set url or cluster, not both"}},
		{"redis cluster", func(c *Config) {
			c.Inventory.Store = StoreRedis
			c.Inventory.Redis.Cluster = []string{"10.0.0.1:7000", "redis-1.internal:7000", "[fd00::1]:7000"}
		}, nil},
		{"rediss url with user", func(c *Config) {
			c.Inventory.Store = StoreRedis
			c.Inventory.Redis.URL = "rediss://user@redis.internal:6380/3?dial_timeout=3s"
			c.Inventory.Redis.Password = "pw"
		}, nil},
		{"url without host", func(c *Config) { c.Inventory.Redis.URL = "redis:///0" }, []string{
			"inventory.redis.url: must be a redis:// or rediss:// URL with a host, such as redis://127.0.0.1:6379/0"}},
		{"unix socket url", func(c *Config) { c.Inventory.Redis.URL = "unix:///run/redis.sock" }, []string{
			`inventory.redis.url: must be a redis:// or rediss:// URL (got scheme "unix")`}},
		{"url without scheme", func(c *Config) { c.Inventory.Redis.URL = "127.0.0.1:6379" }, []string{
			"inventory.redis.url: must be a redis:// or rediss:// URL (it does not parse as a URL)"}},
		{"url with a bad option", func(c *Config) { c.Inventory.Redis.URL = "redis://h:1/0?pool_size=lots" }, []string{
			`inventory.redis.url: must be a redis:// or rediss:// URL: redis: invalid pool_size number: strconv.Atoi: parsing "lots": invalid syntax`}},
		{"bad url is reported with the embedded store too", func(c *Config) { c.Inventory.Redis.URL = "http://x" }, []string{
			`inventory.redis.url: must be a redis:// or rediss:// URL (got scheme "http")`}},
		{"negative pool size", func(c *Config) { c.Inventory.Redis.PoolSize = -1 }, []string{
			"inventory.redis.pool_size: must be 0 (the client's default) or more (got -1)"}},

		{"reaper", func(c *Config) {
			c.Inventory.Reaper.Interval = 0
			c.Inventory.Reaper.Batch = MaxReapBatch + 1
		}, []string{
			"inventory.reaper.interval: must be more than 0, such as 1s (got 0s)",
			"inventory.reaper.batch: must be between 1 and 100000 (got 100001)"}},
		{"reaper limits", func(c *Config) { c.Inventory.Reaper.Batch = MaxReapBatch }, nil},
		{"idempotency just under a day", func(c *Config) { c.Inventory.IdempotencyTTL = Duration(24*time.Hour - time.Second) }, []string{
			"inventory.idempotency_ttl: must be at least 24h, so that a client's retries the next day still find their key (got 23h59m59s)"}},
		{"hold retention", func(c *Config) { c.Inventory.HoldRetention = 0 }, []string{
			"inventory.hold_retention: must be more than 0, such as 1s (got 0s)"}},
		{"body limits", func(c *Config) { c.Inventory.MaxBodyBytes = MinMaxBodyBytes - 1 }, []string{
			"inventory.max_body_bytes: must be between 1024 (1 KiB) and 268435456 (256 MiB) (got 1023)"}},
		{"body limits inclusive", func(c *Config) { c.Inventory.MaxBodyBytes = MaxMaxBodyBytes }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := valid()
			tt.change(c)
			wantProblems(t, Validate(c), tt.want...)
		})
	}
}

func TestValidateNil(t *testing.T) {
	t.Parallel()
	wantProblems(t, Validate(nil), "no configuration (nil)")
}

// TestValidateIsPure checks that Validate changes nothing, valid or not.
func TestValidateIsPure(t *testing.T) {
	t.Parallel()
	for _, c := range []*Config{valid(), Default(), {}, everythingWrong()} {
		before := clone(c)
		_ = Validate(c)
		if !reflect.DeepEqual(c, before) {
			t.Errorf("Validate changed the config:\n got %+v\nwant %+v", c, before)
		}
	}
}

func clone(c *Config) *Config {
	d := *c
	d.Inventory.Redis.Cluster = slices.Clone(c.Inventory.Redis.Cluster)
	return &d
}

// TestValidateHidesSecrets checks that no token or password reaches a
// message, whatever is wrong with it.
func TestValidateHidesSecrets(t *testing.T) {
	t.Parallel()
	c := valid()
	c.Inventory.APIToken = "short-SECRET"
	c.Inventory.Store = StoreRedis
	c.Inventory.Redis.URL = "redis://user:SECRET@host:port/0"
	c.Inventory.Redis.Password = "pw-SECRET"
	c.Inventory.Redis.Username = "u"
	err := Validate(c)
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("got %v", err)
	}
	c.Inventory.Redis.URL = "redis://user:SECRET@host:1/0"
	if err := Validate(c); err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("got %v", err)
	}
}

// TestDefaultsMatchInventory keeps the config defaults in step with the
// defaults of the packages they configure.
func TestDefaultsMatchInventory(t *testing.T) {
	t.Parallel()
	eq(t, DefaultReapInterval, inventory.DefaultReapInterval)
	eq(t, DefaultReapBatch, inventory.DefaultReapBatch)
	eq(t, DefaultIdempotencyTTL, memstore.DefaultIdempotencyTTL)
	eq(t, DefaultHoldRetention, memstore.DefaultHoldRetention)
}

func TestDefaultIsFresh(t *testing.T) {
	t.Parallel()
	a, b := Default(), Default()
	a.Inventory.Redis.Cluster = append(a.Inventory.Redis.Cluster, "x:1")
	a.Log.Level = LevelDebug
	if len(b.Inventory.Redis.Cluster) != 0 || b.Log.Level != DefaultLogLevel {
		t.Error("Default returns shared state")
	}
}

func everythingWrong() *Config {
	c := Default()
	c.Log.Level = "x"
	c.Inventory.Store = StoreRedis
	c.Inventory.Redis.URL = "redis://a:1/0"
	c.Inventory.Redis.Cluster = []string{"x", "x"}
	c.Inventory.Reaper.Batch = -1
	return c
}
