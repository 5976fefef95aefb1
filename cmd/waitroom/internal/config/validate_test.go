package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

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
			"inventory.redis: set url (standalone Redis), cluster (Redis Cluster seed addresses) or sentinel (master name and Sentinel addresses) with store: redis"}},
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
	full, err := Parse(mustRead(t, "testdata/good/serve-full.yaml"), lookupIn(fixtureEnv))
	if err != nil {
		t.Fatal(err)
	}
	wrong := validProxy()
	wrong.Events[0].Lanes = []Lane{{Name: "P", Share: 2}}
	wrong.Routes = append(wrong.Routes, Route{})
	for _, c := range []*Config{valid(), Default(), {}, everythingWrong(), validProxy(), full, wrong} {
		before := deepCopy(c)
		_ = Validate(c)
		_ = ValidateFor(c, RoleProxy|RoleSidecar)
		_ = c.Roles()
		if !reflect.DeepEqual(c, before) {
			t.Errorf("Validate changed the config:\n got %+v\nwant %+v", c, before)
		}
	}
}

func mustRead(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// deepCopy copies c, slices and maps included, so that a change anywhere
// in c shows in a comparison.
func deepCopy(c *Config) *Config {
	out := reflect.New(reflect.TypeFor[Config]()).Elem()
	copyValue(out, reflect.ValueOf(c).Elem())
	return out.Addr().Interface().(*Config)
}

func copyValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Struct:
		dst.Set(src) // unexported fields (Instant's) are plain values
		for i := range src.NumField() {
			if src.Type().Field(i).IsExported() {
				copyValue(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Slice:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			copyValue(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Map:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		for _, k := range src.MapKeys() {
			v := reflect.New(src.Type().Elem()).Elem()
			copyValue(v, src.MapIndex(k))
			m.SetMapIndex(k, v)
		}
		dst.Set(m)
	default:
		dst.Set(src)
	}
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
	a.Serve.Binding[0] = BindIPPrefix
	a.Serve.TrustedProxies = append(a.Serve.TrustedProxies, "10.0.0.0/8")
	a.Serve.Keys.Verify = append(a.Serve.Keys.Verify, Key{})
	a.Admission.Redis.Cluster = append(a.Admission.Redis.Cluster, "y:1")
	a.Origins = append(a.Origins, DefaultOrigin())
	if !reflect.DeepEqual(b, Default()) || len(b.Inventory.Redis.Cluster) != 0 || b.Serve.Binding[0] != DefaultBinding()[0] {
		t.Error("Default returns shared state")
	}
	e, f := DefaultEvent(), DefaultEvent()
	e.Page.Texts["en"] = map[string]string{"title": "x"}
	e.Lanes = append(e.Lanes, Lane{Name: "p"})
	if len(f.Page.Texts) != 0 || len(f.Lanes) != 0 {
		t.Error("DefaultEvent returns shared state")
	}
	o, p := DefaultOrigin(), DefaultOrigin()
	o.Addresses = append(o.Addresses, "a:1")
	if len(p.Addresses) != 0 {
		t.Error("DefaultOrigin returns shared state")
	}
}

// TestFieldDecoders checks that every struct type of the configuration
// that decodes itself is either a one-value type (it also marshals
// itself, such as Duration and Instant) or listed in fieldDecoders, so
// that the walker checks its keys.
func TestFieldDecoders(t *testing.T) {
	t.Parallel()
	marshaler := reflect.TypeFor[yaml.Marshaler]()
	seen := map[reflect.Type]bool{}
	var visit func(t reflect.Type)
	visit = func(typ reflect.Type) {
		switch typ.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map, reflect.Pointer:
			visit(typ.Elem())
			return
		case reflect.Struct:
		default:
			return
		}
		if seen[typ] {
			return
		}
		seen[typ] = true
		if reflect.PointerTo(typ).Implements(unmarshalerType) && !typ.Implements(marshaler) && !fieldDecoders[typ] {
			t.Errorf("%s decodes itself but is not in fieldDecoders: its keys would go unchecked", typ)
		}
		if typ.Implements(marshaler) {
			return
		}
		for i := range typ.NumField() {
			visit(typ.Field(i).Type)
		}
	}
	visit(configType)
	for typ := range fieldDecoders {
		if !seen[typ] {
			t.Errorf("fieldDecoders lists %s, which the configuration does not use", typ)
		}
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
