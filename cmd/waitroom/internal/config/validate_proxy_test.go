package config

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/redisstore"
)

const (
	testSecret     = "0123456789abcdef0123456789abcdef-SECRET" // 39 bytes
	testAdminToken = "admin-token-0123456789-SECRET"
)

var onSale = time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)

// validProxy returns a configuration that passes ValidateFor(RoleProxy)
// and Validate: one origin, one event, gated routes.
func validProxy() *Config {
	c := Default()
	c.Serve.Keys.Signing.Secret = testSecret
	c.Admin.Token = testAdminToken
	o := DefaultOrigin()
	o.Name = "shop"
	o.Addresses = []string{"127.0.0.1:9000"}
	c.Origins = []Origin{o}
	e := DefaultEvent()
	e.ID = "summer"
	e.Name = "Summer Tour 2027"
	e.QueueOpensAt = At(onSale.Add(-time.Hour))
	e.OnSaleAt = At(onSale)
	c.Events = []Event{e}
	c.Routes = []Route{
		{Prefix: "/events/summer", Event: "summer"},
		{Prefix: "/static/", Action: ActionPass},
	}
	return c
}

func TestRoles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(c *Config)
		want   Role
	}{
		{"defaults: an inventory-only file", func(c *Config) {}, RoleSidecar},
		{"only log", func(c *Config) { c.Log.Level = LevelDebug }, RoleSidecar},
		{"inventory set", func(c *Config) { c.Inventory.APIToken = testToken }, RoleSidecar},
		{"an origin", func(c *Config) { c.Origins = []Origin{DefaultOrigin()} }, RoleProxy},
		{"an event", func(c *Config) { c.Events = []Event{DefaultEvent()} }, RoleProxy},
		{"a route", func(c *Config) { c.Routes = []Route{{Prefix: "/"}} }, RoleProxy},
		{"serve changed", func(c *Config) { c.Serve.Listen = ":80" }, RoleProxy},
		{"admin changed", func(c *Config) { c.Admin.Token = testAdminToken }, RoleProxy},
		{"admission changed", func(c *Config) { c.Admission.Replica = "a" }, RoleProxy},
		{"with_inventory", func(c *Config) { c.Serve.WithInventory = true }, RoleProxy | RoleSidecar},
		{"proxy and inventory", func(c *Config) {
			c.Origins = []Origin{DefaultOrigin()}
			c.Inventory.Listen = ":1"
		}, RoleProxy | RoleSidecar},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Default()
			tt.change(c)
			eq(t, c.Roles(), tt.want)
		})
	}
}

// TestValidateForRoles checks what each role requires.
func TestValidateForRoles(t *testing.T) {
	t.Parallel()
	noToken := "inventory.api_token: set inventory.api_token (e.g. from ${WAITROOM_INVENTORY_TOKEN}) or insecure_no_auth: true"
	forRoles := func(r Role) func(*Config) error {
		return func(c *Config) error { return ValidateFor(c, r) }
	}
	tests := []struct {
		name  string
		c     func() *Config
		check func(*Config) error
		want  []string
	}{
		{"proxy without an inventory section", validProxy, forRoles(RoleProxy), nil},
		{"check-config of a proxy file", validProxy, Validate, nil},
		{"the same file for waitroom inventory", validProxy, forRoles(RoleSidecar), []string{noToken}},
		{"proxy with the in-process sidecar needs its token", func() *Config {
			c := validProxy()
			c.Serve.WithInventory = true
			return c
		}, forRoles(RoleProxy), []string{noToken}},
		{"check-config with the in-process sidecar", func() *Config {
			c := validProxy()
			c.Serve.WithInventory = true
			return c
		}, Validate, []string{noToken}},
		{"an inventory file is no proxy", valid, forRoles(RoleSidecar), nil},
		{"check-config of an inventory file", valid, Validate, nil},
		{"an inventory file for serve", valid, forRoles(RoleProxy), []string{
			"serve.keys.signing.secret: set secret (from the environment, such as ${WAITROOM_SIGNING_SECRET}) or secret_file: an HS256 key needs at least 32 bytes of secret",
			`admin.token: set admin.token (from the environment, such as ${WAITROOM_ADMIN_TOKEN}), or listen: "" to run without the operator API`,
			"origins: needs at least one origin: the site waitroom forwards to"}},
		{"no role checks values only", Default, forRoles(0), nil},
		{"check-config of an empty file", Default, Validate, []string{noToken}},
		{"values are checked whatever the role", func() *Config {
			c := valid()
			c.Serve.Prefix = "wr"
			c.Origins = []Origin{{Name: "Shop"}}
			return c
		}, forRoles(RoleSidecar), []string{
			`serve.prefix: must be a path such as /_wr: starting with "/", not ending with one, made of letters, digits and -._~ (got "wr")`,
			`origins[0].name: must be 1 to 64 characters from [a-z0-9_-] (got "Shop")`,
			"origins[0].addresses: needs at least one host:port, such as 127.0.0.1:9000",
			"origins[0].max_conns: must be 1 or more (got 0)",
			"origins[0].dial_timeout: must be more than 0, such as 1s (got 0s)",
			"origins[0].read_timeout: must be more than 0, such as 1s (got 0s)",
			"origins[0].write_timeout: must be more than 0, such as 1s (got 0s)",
			"origins[0].max_idle_conn_duration: must be more than 0, such as 1s (got 0s)",
			"origins[0].read_buffer_bytes: must be between 4096 (4 KiB) and 1048576 (1 MiB) (got 0)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantProblems(t, tt.check(tt.c()), tt.want...)
		})
	}
}

func TestValidateServe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(c *Config)
		want   []string
	}{
		{"valid", func(c *Config) {}, nil},
		{"no listener", func(c *Config) { c.Serve.Listen = "" }, []string{
			"serve.listen: is empty and so is tls.listen: the proxy needs a listener (such as 127.0.0.1:8080)"}},
		{"tls only", func(c *Config) {
			c.Serve.Listen = ""
			c.Serve.TLS = ServeTLS{Listen: ":443", CertFile: "/etc/waitroom/cert.pem", KeyFile: "/etc/waitroom/key.pem", MinVersion: TLS13}
		}, nil},
		{"tls without files", func(c *Config) {
			c.Serve.TLS.Listen = ":443"
			c.Serve.TLS.MinVersion = "1.1"
		}, []string{
			"serve.tls.cert_file: must be set with tls.listen (a PEM certificate chain)",
			"serve.tls.key_file: must be set with tls.listen (the certificate's PEM private key)",
			`serve.tls.min_version: must be "1.2" or "1.3" (got "1.1")`}},
		{"tls files without a listener", func(c *Config) { c.Serve.TLS.CertFile = "c.pem" }, []string{
			"serve.tls.listen: is empty while cert_file or key_file is set: set it (such as :443) or remove them"}},
		{"bad listen", func(c *Config) { c.Serve.Listen = "8080" }, []string{
			`serve.listen: must be host:port, such as 127.0.0.1:8082 (got "8080")`}},
		{"prefixes", func(c *Config) { c.Serve.Prefix = "/_wr/" }, []string{
			`serve.prefix: must be a path such as /_wr: starting with "/", not ending with one, made of letters, digits and -._~ (got "/_wr/")`}},
		{"prefix of two segments", func(c *Config) { c.Serve.Prefix = "/.well-known/waitroom" }, nil},
		{"prefix with a dot segment", func(c *Config) { c.Serve.Prefix = "/a/../b" }, []string{
			`serve.prefix: must be a path such as /_wr: starting with "/", not ending with one, made of letters, digits and -._~ (got "/a/../b")`}},
		{"prefix root", func(c *Config) { c.Serve.Prefix = "/" }, []string{
			`serve.prefix: must be a path such as /_wr: starting with "/", not ending with one, made of letters, digits and -._~ (got "/")`}},
		{"trusted proxies", func(c *Config) {
			c.Serve.TrustedProxies = []string{"10.0.0.0/8", "192.0.2.7", "2001:db8::/32", "::1", "10.0.0.1/8", "x", "192.0.2.7", "10.0.0.0/33", "fe80::1%eth0"}
		}, []string{
			"serve.trusted_proxies[4]: has bits set after the /8: did you mean 10.0.0.0/8?",
			`serve.trusted_proxies[5]: must be a CIDR such as 10.0.0.0/8 or an IP address such as 192.0.2.7 (got "x")`,
			"serve.trusted_proxies[6]: repeats [1]",
			`serve.trusted_proxies[7]: must be a CIDR such as 10.0.0.0/8 or an IP address such as 192.0.2.7 (got "10.0.0.0/33")`,
			`serve.trusted_proxies[8]: must be a CIDR such as 10.0.0.0/8 or an IP address such as 192.0.2.7 (got "fe80::1%eth0")`}},
		{"client ip header", func(c *Config) { c.Serve.ClientIPHeader = "X Real IP" }, []string{
			`serve.client_ip_header: must be an HTTP header name such as X-Forwarded-For (got "X Real IP")`}},
		{"client ip headers", func(c *Config) { c.Serve.ClientIPHeader = "Forwarded" }, nil},
		{"client ip header set by waitroom", func(c *Config) { c.Serve.ClientIPHeader = "x-waitroom-visitor" }, []string{
			"serve.client_ip_header: cannot be x-waitroom-visitor: waitroom sets, removes or routes on that header; use X-Forwarded-For, Forwarded, X-Real-IP, CF-Connecting-IP or another header that holds one client address"}},
		{"client ip header hop by hop", func(c *Config) { c.Serve.ClientIPHeader = "Connection" }, []string{
			"serve.client_ip_header: cannot be Connection: waitroom sets, removes or routes on that header; use X-Forwarded-For, Forwarded, X-Real-IP, CF-Connecting-IP or another header that holds one client address"}},
		{"client ip header is the bypass header", func(c *Config) { c.Serve.ClientIPHeader = "X-Staff"; c.Serve.Bypass.Header = "x-staff" }, []string{
			"serve.client_ip_header: cannot be X-Staff: waitroom sets, removes or routes on that header; use X-Forwarded-For, Forwarded, X-Real-IP, CF-Connecting-IP or another header that holds one client address"}},
		{"client ip header cloudflare", func(c *Config) { c.Serve.ClientIPHeader = "CF-Connecting-IP" }, nil},
		{"proxy protocol", func(c *Config) {
			c.Serve.ProxyProtocol = true
			c.Serve.TrustedProxies = []string{"10.0.0.0/8"}
		}, nil},
		{"proxy protocol without trusted proxies", func(c *Config) {
			c.Serve.ProxyProtocol = true
			c.Serve.ProxyProtocolTimeout = 0
		}, []string{
			"serve.proxy_protocol: needs trusted_proxies: only the balancers listed there may send a PROXY header, and every other connection is refused",
			"serve.proxy_protocol_timeout: must be more than 0, such as 1s (got 0s)"}},
		{"header limits", func(c *Config) {
			c.Serve.MaxHeaderBytes = MinMaxHeaderBytes - 1
			c.Serve.MaxBodyBytes = -1
		}, []string{
			"serve.max_header_bytes: must be between 16384 (16 KiB, for real-world cookies) and 1048576 (1 MiB) (got 16383)",
			"serve.max_body_bytes: must be 0 (no limit) or more (got -1)"}},
		{"limits inclusive and unlimited", func(c *Config) {
			c.Serve.MaxHeaderBytes = MaxMaxHeaderBytes
			c.Serve.MaxBodyBytes = 0
			c.Serve.WriteTimeout = 0
			c.Serve.ShutdownGrace = 0
		}, nil},
		{"timeouts", func(c *Config) {
			c.Serve.ReadTimeout = 0
			c.Serve.WriteTimeout = -1
			c.Serve.IdleTimeout = 0
			c.Serve.ShutdownGrace = Duration(-time.Second)
		}, []string{
			"serve.read_timeout: must be more than 0, such as 1s (got 0s)",
			"serve.write_timeout: must be 0 or more (got -1ns)",
			"serve.idle_timeout: must be more than 0, such as 1s (got 0s)",
			"serve.shutdown_grace: must be 0 or more (got -1s)"}},
		{"remote sidecar", func(c *Config) {
			c.Serve.Inventory = InventoryClient{URL: "https://inventory.internal:8082", Token: testToken, Refresh: Duration(time.Second)}
			c.Events[0].InventoryEvent = "summer-2027"
		}, nil},
		{"remote sidecar without a token", func(c *Config) { c.Serve.Inventory.URL = "http://10.0.0.7:8082" }, nil},
		{"sidecar urls", func(c *Config) {
			c.Serve.Inventory = InventoryClient{URL: "ftp://x", Token: "short", Refresh: 0}
		}, []string{
			`serve.inventory.url: must be the sidecar's base URL, such as http://10.0.0.7:8082 (got scheme "ftp")`,
			"serve.inventory.token: must be at least 16 characters (got 5); openssl rand -hex 32 makes a good one",
			"serve.inventory.refresh: must be more than 0, such as 1s (got 0s)"}},
		{"sidecar url with credentials", func(c *Config) { c.Serve.Inventory.URL = "http://u:SECRET@h:1" }, []string{
			"serve.inventory.url: must not carry credentials: put the bearer token in token"}},
		{"sidecar url with a query", func(c *Config) { c.Serve.Inventory.URL = "http://h:1/?a=b" }, []string{
			"serve.inventory.url: must be the sidecar's base URL, such as http://10.0.0.7:8082, without a query or fragment"}},
		{"sidecar url without host", func(c *Config) { c.Serve.Inventory.URL = "http:///x" }, []string{
			"serve.inventory.url: must be the sidecar's base URL, such as http://10.0.0.7:8082 (the host is missing)"}},
		{"sidecar url unparsable", func(c *Config) { c.Serve.Inventory.URL = "http://SECRET@[::1" }, []string{
			"serve.inventory.url: must be the sidecar's base URL, such as http://10.0.0.7:8082 (it does not parse as a URL)"}},
		{"sidecar url and with_inventory", func(c *Config) {
			c.Inventory.APIToken = testToken
			c.Serve.WithInventory = true
			c.Serve.Inventory.URL = "http://10.0.0.7:8082"
		}, []string{
			"serve.inventory.url: is set while with_inventory is true: leave it empty to use the sidecar in this process, or set with_inventory: false to use the one at url"}},
		{"token without url", func(c *Config) { c.Serve.Inventory.Token = testToken }, []string{
			"serve.inventory.token: is set while url is empty: the token is only sent to the sidecar at url"}},
		{"pass cache and bindings", func(c *Config) {
			c.Serve.PassCacheSize = 0
			c.Serve.Binding = []BindingSignal{BindIPPrefix, "tls", BindIPPrefix}
		}, []string{
			"serve.pass_cache_size: must be 1 or more (got 0)",
			`serve.binding[1]: must be user_agent or ip_prefix (got "tls")`,
			"serve.binding[2]: repeats binding[0]"}},
		{"no binding", func(c *Config) { c.Serve.Binding = []BindingSignal{} }, nil},

		{"cookies", func(c *Config) {
			c.Serve.Cookies = Cookies{Ticket: "wr ticket", Pass: "__Host-pass", Domain: "-x.com", Secure: "yes", SameSite: "none"}
		}, []string{
			`serve.cookies.ticket: must be a cookie name: letters, digits and !#$%&'*+-.^_` + "`" + `|~ (got "wr ticket")`,
			"serve.cookies.pass: starts with __Host-, which browsers accept only with secure: always and no domain",
			`serve.cookies.domain: must be a domain name such as example.com (got "-x.com")`,
			`serve.cookies.secure: must be auto, always or never (got "yes")`,
			`serve.cookies.same_site: must be lax or strict (got "none")`}},
		{"same cookie names", func(c *Config) { c.Serve.Cookies.Pass = DefaultTicketCookie }, []string{
			`serve.cookies.pass: must differ from ticket (both are "wr_ticket")`}},
		{"secure prefixes", func(c *Config) {
			c.Serve.Cookies = Cookies{Ticket: "__Host-t", Pass: "__secure-p", Secure: SecureAlways, SameSite: SameSiteStrict, Domain: ""}
		}, nil},
		{"secure prefix without secure", func(c *Config) { c.Serve.Cookies.Pass = "__Secure-p" }, []string{
			"serve.cookies.pass: starts with __Secure-, which browsers accept only with secure: always"}},
		{"cookie domain", func(c *Config) { c.Serve.Cookies.Domain = ".example.com" }, nil},

		{"bypass", func(c *Config) {
			c.Serve.Bypass = Bypass{CIDRs: []string{"10.1.0.0/16", "10.1.0.0/24x"}, Header: "", Secret: "short-SECRET"}
		}, []string{
			`serve.bypass.cidrs[1]: must be a CIDR such as 10.0.0.0/8 or an IP address such as 192.0.2.7 (got "10.1.0.0/24x")`,
			`serve.bypass.header: must be an HTTP header name such as X-Forwarded-For (got "")`,
			"serve.bypass.secret: must be at least 16 characters (got 12); openssl rand -hex 32 makes a good one"}},
		{"bypass secret with a newline", func(c *Config) { c.Serve.Bypass.Secret = "0123456789abcdef-SECRET\n" }, []string{
			"serve.bypass.secret: starts or ends with white space (a trailing newline from a secrets file?)"}},
		{"rate limits", func(c *Config) {
			c.Serve.RateLimits = RateLimits{PerIP: Bucket{Rate: -1, Burst: 5}, PerPrefix: Bucket{Rate: 1, Burst: 0}, IPv4Prefix: 33, IPv6Prefix: 8, TableSize: 0}
		}, []string{
			"serve.rate_limits.per_ip.rate: must be 0 (no limit) or more requests per second (got -1)",
			"serve.rate_limits.per_prefix.burst: must be 1 or more with a rate (got 0)",
			"serve.rate_limits.ipv4_prefix: must be between 8 and 32 (got 33)",
			"serve.rate_limits.ipv6_prefix: must be between 16 and 128 (got 8)",
			"serve.rate_limits.table_size: must be 1 or more (got 0)"}},
		{"rate NaN", func(c *Config) { c.Serve.RateLimits.PerIP.Rate = math.NaN() }, []string{
			"serve.rate_limits.per_ip.rate: must be 0 (no limit) or more requests per second (got NaN)"}},
		{"rate limits off", func(c *Config) { c.Serve.RateLimits.PerIP = Bucket{} }, nil},

		{"admin without listener needs no token", func(c *Config) {
			c.Admin = Admin{}
		}, nil},
		{"admin token", func(c *Config) { c.Admin.Token = "0123456789 abcdef" }, []string{
			"admin.token: must be printable ASCII without spaces: it travels in an HTTP header"}},
		{"admin listen", func(c *Config) { c.Admin.Listen = "localhost" }, []string{
			`admin.listen: must be host:port, such as 127.0.0.1:8082 (got "localhost")`}},
		{"listener collisions", func(c *Config) {
			c.Serve.Listen = ":8080"
			c.Serve.TLS = ServeTLS{Listen: "127.0.0.1:8080", CertFile: "c", KeyFile: "k", MinVersion: TLS12}
			c.Admin.Listen = "[::1]:8080"
		}, []string{
			"serve.tls.listen: uses the same address as serve.listen (:8080)",
			"admin.listen: uses the same address as serve.listen (:8080)"}},
		{"different hosts, same port", func(c *Config) {
			c.Serve.Listen = "127.0.0.1:8080"
			c.Admin.Listen = "127.0.0.2:8080"
		}, nil},
		{"port 0 twice", func(c *Config) {
			c.Serve.Listen = "127.0.0.1:0"
			c.Admin.Listen = "127.0.0.1:0"
		}, nil},
		{"in-process sidecar on the proxy's port", func(c *Config) {
			c.Inventory.APIToken = testToken
			c.Serve.WithInventory = true
			c.Inventory.Listen = "0.0.0.0:8080"
		}, []string{
			"inventory.listen: uses the same address as serve.listen (127.0.0.1:8080)"}},

		{"admission on redis", func(c *Config) {
			c.Admission.Store = StoreRedis
			c.Admission.Redis.Cluster = []string{"10.0.0.1:7000", "10.0.0.2:7000"}
			c.Admission.Replica = "web-1"
		}, nil},
		{"admission problems", func(c *Config) {
			c.Admission = Admission{Store: "memory", Redis: Redis{URL: "redis://h:1/0", Cluster: []string{"h:1"}, PoolSize: -2}, RedisPrefix: "{wr}:", Replica: "web 1"}
		}, []string{
			`admission.store: must be embedded or redis (got "memory")`,
			"admission.redis: set url or cluster, not both",
			"admission.redis.pool_size: must be 0 (the client's default) or more (got -2)",
			`admission.redis_prefix: must not contain { or }: they would change the keys' Redis Cluster hash slot (got "{wr}:")`,
			`admission.replica: must be at most 128 printable ASCII characters without spaces (got "web 1")`}},
		{"admission redis without address", func(c *Config) {
			c.Admission.Store = StoreRedis
			c.Admission.DataDir = ""
			c.Admission.RedisPrefix = ""
		}, []string{
			"admission.redis: set url (standalone Redis) or cluster (Redis Cluster seed addresses) with store: redis",
			`admission.redis_prefix: must not be empty (the default is "wr:adm:")`}},
		{"admission embedded without dir", func(c *Config) { c.Admission.DataDir = "" }, []string{
			"admission.data_dir: must be set with store: embedded"}},
		{"admission dir holds the inventory's", func(c *Config) {
			c.Inventory.APIToken = testToken
			c.Serve.WithInventory = true
			c.Inventory.DataDir = "/var/lib/waitroom/inv"
			c.Admission.DataDir = "/var/lib/waitroom/"
		}, []string{
			"admission.data_dir: is inventory.data_dir or contains it: give each store a directory of its own"}},
		{"admission dir inside the inventory's is fine", func(c *Config) {
			c.Inventory.APIToken = testToken
			c.Serve.WithInventory = true
		}, nil},
		{"relative times on shared Redis", func(c *Config) {
			c.Admission.Store = StoreRedis
			c.Admission.Redis.URL = "redis://127.0.0.1:6379/0"
			c.Events[0].QueueOpensAt = AfterStart(0)
			c.Events[0].OnSaleAt = AfterStart(30 * time.Second)
		}, []string{
			"events[0].queue_opens_at: is relative to the process start (now), which differs on every replica sharing Redis: use an RFC 3339 time",
			"events[0].on_sale_at: is relative to the process start (now+30s), which differs on every replica sharing Redis: use an RFC 3339 time"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validProxy()
			tt.change(c)
			wantProblems(t, ValidateFor(c, RoleProxy), tt.want...)
		})
	}
}

func TestValidateKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(k *Keys)
		want   []string
	}{
		{"hs256 from a file", func(k *Keys) { k.Signing.Secret, k.Signing.SecretFile = "", "/run/secrets/signing" }, nil},
		{"hs256 both", func(k *Keys) { k.Signing.SecretFile = "/run/secrets/signing" }, []string{
			"serve.keys.signing: set secret or secret_file, not both"}},
		{"hs256 short", func(k *Keys) { k.Signing.Secret = "too-short-SECRET" }, []string{
			"serve.keys.signing.secret: must be at least 32 bytes (got 16); openssl rand -hex 32 makes a good one"}},
		{"hs256 with a newline", func(k *Keys) { k.Signing.Secret = testSecret + "\n" }, []string{
			"serve.keys.signing.secret: starts or ends with white space (a trailing newline from a secrets file?)"}},
		{"hs256 with key files", func(k *Keys) {
			k.Signing.PrivateKeyFile = "a.pem"
			k.Signing.PublicKeyFile = "b.pem"
		}, []string{
			"serve.keys.signing.private_key_file: is for EdDSA keys; an HS256 key has secret or secret_file",
			"serve.keys.signing.public_key_file: is for EdDSA keys; an HS256 key has secret or secret_file"}},
		{"eddsa signing", func(k *Keys) {
			k.Signing = Key{ID: "2027-03", Algorithm: AlgEdDSA, PrivateKeyFile: "/etc/waitroom/signing.pem"}
		}, nil},
		{"eddsa signing without a key", func(k *Keys) {
			k.Signing = Key{ID: "k2", Algorithm: AlgEdDSA, Secret: testSecret, SecretFile: "f"}
		}, []string{
			"serve.keys.signing.secret: is for HS256 keys; an EdDSA key has key files",
			"serve.keys.signing.secret_file: is for HS256 keys; an EdDSA key has key files",
			"serve.keys.signing.private_key_file: must be set: the signing key needs an Ed25519 private key (waitroom keygen makes one)"}},
		{"eddsa signing with a public key", func(k *Keys) {
			k.Signing = Key{ID: "k2", Algorithm: AlgEdDSA, PrivateKeyFile: "a", PublicKeyFile: "b"}
		}, []string{
			"serve.keys.signing.public_key_file: is for verification keys: the signing key's public key comes from its private_key_file"}},
		{"bad id and algorithm", func(k *Keys) {
			k.Signing.ID = "key one"
			k.Signing.Algorithm = "RS256"
		}, []string{
			`serve.keys.signing.id: must be 1 to 64 characters from [A-Za-z0-9._-] (got "key one")`,
			`serve.keys.signing.algorithm: must be HS256 or EdDSA (got "RS256")`}},
		{"long id", func(k *Keys) { k.Signing.ID = strings.Repeat("k", MaxKeyIDLength+1) }, []string{
			`serve.keys.signing.id: must be 1 to 64 characters from [A-Za-z0-9._-] (got "` + strings.Repeat("k", 65) + `")`}},
		{"rotation", func(k *Keys) {
			k.Verify = []Key{
				{ID: "k0", Algorithm: AlgHS256, SecretFile: "/run/secrets/old"},
				{ID: "e1", Algorithm: AlgEdDSA, PublicKeyFile: "old.pub.pem"},
				{ID: "e2", Algorithm: AlgEdDSA, PrivateKeyFile: "old.pem"},
			}
		}, nil},
		{"verification key problems", func(k *Keys) {
			k.Verify = []Key{
				{ID: "k1", Algorithm: AlgHS256},
				{ID: "e1", Algorithm: AlgEdDSA},
				{ID: "e2", Algorithm: AlgEdDSA, PrivateKeyFile: "a", PublicKeyFile: "b"},
				{ID: "e1", Algorithm: AlgEdDSA, PublicKeyFile: "b"},
				{Algorithm: AlgHS256, Secret: testSecret},
			}
		}, []string{
			"serve.keys.verify[0].secret: set secret (from the environment, such as ${WAITROOM_SIGNING_SECRET}) or secret_file: an HS256 key needs at least 32 bytes of secret",
			"serve.keys.verify[0].id: repeats the id of signing: every key needs its own id",
			"serve.keys.verify[1].public_key_file: must be set (or private_key_file): a verification key needs the Ed25519 public key",
			"serve.keys.verify[2]: set public_key_file or private_key_file, not both",
			"serve.keys.verify[3].id: repeats the id of verify[1]: every key needs its own id",
			`serve.keys.verify[4].id: must be 1 to 64 characters from [A-Za-z0-9._-] (got "")`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validProxy()
			tt.change(&c.Serve.Keys)
			wantProblems(t, ValidateFor(c, RoleProxy), tt.want...)
		})
	}
}

func TestValidateOriginsAndRoutes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(c *Config)
		want   []string
	}{
		{"no origins", func(c *Config) { c.Origins = nil; c.Routes = nil }, []string{
			"origins: needs at least one origin: the site waitroom forwards to"}},
		{"full origin", func(c *Config) {
			o := &c.Origins[0]
			o.Addresses = []string{"10.0.0.1:443", "shop-2.internal:443", "[fd00::3]:443"}
			o.TLS, o.TLSServerName, o.TLSCAFile, o.Host = true, "shop.example.com", "/etc/ssl/origin-ca.pem", "shop.example.com:8443"
			o.MaxInFlight, o.MaxConnWait, o.Retries, o.MaxResponseBodyBytes = 2000, 0, MaxRetries, 1<<30
			o.HealthCheck.Path = ""
			o.HealthCheck.Interval = 0 // disabled: not checked
		}, nil},
		{"origin names", func(c *Config) {
			o := DefaultOrigin()
			o.Name, o.Addresses = "shop", []string{"127.0.0.1:9001"}
			c.Origins = append(c.Origins, o, o)
			c.Origins[2].Name = strings.Repeat("a", MaxNameLength+1)
		}, []string{
			"origins[1].name: repeats origins[0].name",
			`origins[2].name: must be 1 to 64 characters from [a-z0-9_-] (got "` + strings.Repeat("a", 65) + `")`}},
		{"origin problems", func(c *Config) {
			o := &c.Origins[0]
			o.Addresses = []string{"127.0.0.1:9000", "127.0.0.1", "127.0.0.1:9000", ":9000"}
			o.TLSServerName, o.TLSCAFile, o.Host = "bad name", "ca.pem", "a b"
			o.MaxConns, o.MaxInFlight, o.DialTimeout, o.MaxConnWait = 0, -1, 0, -1
			o.ReadBufferBytes, o.MaxResponseBodyBytes, o.Retries = MaxReadBufferBytes+1, -1, MaxRetries+1
		}, []string{
			`origins[0].addresses[1]: must be host:port, such as 127.0.0.1:9000 (got "127.0.0.1")`,
			"origins[0].addresses[2]: repeats addresses[0]",
			`origins[0].addresses[3]: must be host:port, such as 127.0.0.1:9000 (the host is missing in ":9000")`,
			"origins[0].tls_server_name: is set while tls is false",
			"origins[0].tls_ca_file: is set while tls is false",
			`origins[0].tls_server_name: must be a host name such as shop.example.com (got "bad name")`,
			`origins[0].host: must be a host name, optionally with :port, such as shop.example.com (got "a b")`,
			"origins[0].max_conns: must be 1 or more (got 0)",
			"origins[0].max_in_flight: must be 0 (max_conns times the addresses) or more (got -1)",
			"origins[0].dial_timeout: must be more than 0, such as 1s (got 0s)",
			"origins[0].max_conn_wait: must be 0 or more (got -1ns)",
			"origins[0].read_buffer_bytes: must be between 4096 (4 KiB) and 1048576 (1 MiB) (got 1048577)",
			"origins[0].max_response_body_bytes: must be 0 (no limit) or more (got -1)",
			"origins[0].retries: must be between 0 and 10 (got 11)"}},
		{"host headers", func(c *Config) { c.Origins[0].Host = "[::1]:8080" }, nil},
		{"health check", func(c *Config) {
			c.Origins[0].HealthCheck = HealthCheck{Path: "//evil", Interval: Duration(time.Second), Timeout: Duration(time.Second)}
		}, []string{
			`origins[0].health_check.path: must be a path such as /healthz, or empty to disable health checks ("//evil" starts with //, which browsers read as another host)`,
			"origins[0].health_check.timeout: must be less than interval (1s) (got 1s)",
			"origins[0].health_check.unhealthy_after: must be 1 or more (got 0)",
			"origins[0].health_check.healthy_after: must be 1 or more (got 0)"}},

		{"every kind of route", func(c *Config) {
			o := DefaultOrigin()
			o.Name, o.Addresses = "api", []string{"127.0.0.1:9001"}
			c.Origins = append(c.Origins, o)
			c.Routes = []Route{
				{Glob: "/", Action: ActionPass},
				{Prefix: "/events/summer/", Event: "summer", Action: ActionQueue},
				{Glob: "/events/*/checkout/**", Event: "summer", Action: ActionBlock, Origin: "api"},
				{Prefix: "/api/", Origin: "api"},
				{Prefix: "/_w", Action: ActionPass}, // covers more than the reserved prefix
			}
		}, nil},
		{"route shapes", func(c *Config) {
			c.Routes = []Route{
				{},
				{Prefix: "/a", Glob: "/a/*"},
				{Prefix: "events"},
				{Glob: "/x/[a-"},
				{Prefix: "/a b"},
				{Glob: "/q?x#y"},
			}
		}, []string{
			"routes[0]: set prefix or glob: the paths this route applies to",
			"routes[1]: set prefix or glob, not both",
			`routes[2].prefix: must be a path such as /events/ ("events" does not start with /)`,
			`routes[3].glob: is not a valid pattern: check its [ ] classes and \ escapes (got "/x/[a-")`,
			`routes[4].prefix: must be a path such as /events/ ("/a b" holds a space, control character, ? or #)`,
			`routes[5].glob: must be a pattern such as /events/*/checkout ("/q?x#y" holds a space, control character, ? or #)`}},
		{"routes into the reserved prefix", func(c *Config) {
			c.Routes = []Route{{Prefix: "/_wr"}, {Prefix: "/_wr/api/"}, {Glob: "/_wr/*"}}
		}, []string{
			"routes[0].prefix: is inside serve.prefix /_wr, which waitroom reserves: this route would never apply",
			"routes[1].prefix: is inside serve.prefix /_wr, which waitroom reserves: this route would never apply",
			"routes[2].glob: is inside serve.prefix /_wr, which waitroom reserves: this route would never apply"}},
		{"shadowed routes", func(c *Config) {
			c.Routes = []Route{{Prefix: "/events/"}, {Prefix: "/events/summer", Event: "summer"}, {Glob: "/a/*"}, {Glob: "/a/*"}, {Prefix: "/events/"}}
		}, []string{
			"routes[1].prefix: is covered by routes[0] (prefix /events/) listed before it: the first match wins, so list the longer prefix first",
			"routes[3].glob: repeats routes[2]: the first match wins, so this route never applies",
			"routes[4].prefix: repeats routes[0]: the first match wins, so this route never applies"}},
		{"route references", func(c *Config) {
			c.Routes = []Route{
				{Prefix: "/a", Event: "winter"},
				{Prefix: "/b", Event: "summer", Action: ActionPass},
				{Prefix: "/c", Action: ActionBlock},
				{Prefix: "/d", Action: ActionQueue},
				{Prefix: "/e", Origin: "web"},
				{Prefix: "/f", Action: "deny"},
			}
		}, []string{
			"routes[0].event: names no event in events (known: summer)",
			"routes[1].event: is set with action: pass, which forwards without a pass: remove event, or use queue or block",
			"routes[2].event: must be set with action: block: it names the event whose pass the paths need",
			"routes[3].event: must be set with action: queue: it names the event whose pass the paths need",
			"routes[4].origin: names no origin in origins (known: shop)",
			`routes[5].action: must be queue, pass or block (got "deny")`}},
		{"route to no events", func(c *Config) {
			c.Events = nil
		}, []string{"routes[0].event: names no event in events (there are none)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validProxy()
			tt.change(c)
			wantProblems(t, ValidateFor(c, RoleProxy), tt.want...)
		})
	}
}

func TestValidateEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(e *Event)
		want   []string
	}{
		{"relative schedule", func(e *Event) {
			e.QueueOpensAt, e.OnSaleAt, e.ClosesAt = AfterStart(0), AfterStart(30*time.Second), AfterStart(time.Hour)
		}, nil},
		{"mixed kinds are checked at start", func(e *Event) {
			e.QueueOpensAt, e.ClosesAt = AfterStart(0), AfterStart(time.Hour)
		}, nil},
		{"no pre-queue", func(e *Event) { e.QueueOpensAt = Instant{} }, nil},
		{"no on-sale", func(e *Event) { e.OnSaleAt = Instant{} }, []string{
			"events[0].on_sale_at: must be set: when the sale starts (an RFC 3339 time such as 2027-03-01T10:00:00Z, or now+30s)"}},
		{"out of order", func(e *Event) {
			e.QueueOpensAt = At(onSale.Add(time.Second))
			e.ClosesAt = At(onSale)
		}, []string{
			"events[0].queue_opens_at: is after on_sale_at (2027-03-01T10:00:00Z): the queue must open before the sale, or at it",
			"events[0].closes_at: must be after on_sale_at (2027-03-01T10:00:00Z)"}},
		{"relative out of order", func(e *Event) {
			e.QueueOpensAt, e.OnSaleAt, e.ClosesAt = AfterStart(time.Minute), AfterStart(30*time.Second), AfterStart(0)
		}, []string{
			"events[0].queue_opens_at: is after on_sale_at (now+30s): the queue must open before the sale, or at it",
			"events[0].closes_at: must be after on_sale_at (now+30s)"}},
		{"opens at the sale", func(e *Event) { e.QueueOpensAt = e.OnSaleAt }, nil},
		{"names and ids", func(e *Event) {
			e.ID = "Summer"
			e.Name = "a\x00b"
		}, []string{
			"routes[0].event: names no event in events (known: Summer)",
			`events[0].id: must be 1 to 64 characters from [a-z0-9_-] (got "Summer")`,
			"events[0].name: must be at most 200 characters of text, without control characters"}},
		{"long name", func(e *Event) { e.Name = strings.Repeat("ü", MaxEventNameLength) }, nil},
		{"landing paths", func(e *Event) { e.LandingPath = "https://evil.example/" }, []string{
			`events[0].landing_path: must be a path on this site, such as /events/summer ("https://evil.example/" does not start with /)`}},
		{"landing path with a backslash", func(e *Event) { e.LandingPath = `/\evil.example` }, []string{
			`events[0].landing_path: must be a path on this site, such as /events/summer ("/\\evil.example" holds a space, control character or backslash)`}},
		{"landing path with a query", func(e *Event) { e.LandingPath = "/events/summer?from=queue" }, nil},
		{"landing path with a fragment", func(e *Event) { e.LandingPath = "/events#top" }, []string{
			`events[0].landing_path: must be a path on this site, such as /events/summer ("/events#top" is not a plain path)`}},
		{"durations and enums", func(e *Event) {
			e.Tranche, e.SessionDuration, e.NoShowGrace = 0, -1, 0
			e.PositionDisplay, e.Challenge.Mode = "rounded", "pow"
		}, []string{
			"events[0].tranche: must be more than 0, such as 1s (got 0s)",
			"events[0].session_duration: must be more than 0, such as 1s (got -1ns)",
			"events[0].no_show_grace: must be more than 0, such as 1s (got 0s)",
			`events[0].position_display: must be exact, approximate or hidden (got "rounded")`,
			`events[0].challenge.mode: must be off, on or dry_run (got "pow")`}},
		{"inventory link without a sidecar", func(e *Event) { e.InventoryEvent = "summer-2027" }, []string{
			"events[0].inventory_event: needs a sidecar to read remaining seats from: set serve.inventory.url, or serve.with_inventory: true"}},
		{"inventory link with a bad id", func(e *Event) { e.InventoryEvent = "-x" }, []string{
			`events[0].inventory_event: must be a sidecar event id: 1 to 64 characters from [A-Za-z0-9_.-], starting with a letter or digit (got "-x")`}},
		{"numbers", func(e *Event) {
			e.VisitorsPerSeat = 0
			e.Caps = Caps{MaxActive: -1, MaxNewPerMinute: -1}
		}, []string{
			"events[0].visitors_per_seat: must be more than 0, such as 1.5 (got 0)",
			"events[0].caps.max_active: must be 0 or more (got -1)",
			"events[0].caps.max_new_per_minute: must be 0 or more (got -1)"}},
		{"infinite visitors per seat", func(e *Event) { e.VisitorsPerSeat = math.Inf(1) }, []string{
			"events[0].visitors_per_seat: must be more than 0, such as 1.5 (got +Inf)"}},
		{"controller", func(e *Event) {
			e.Controller = Controller{Tick: 0, TargetP95: 0, TargetErrorRate: 1, InitialActive: 5, MinActive: 6, Increase: -1, Decrease: 0}
		}, []string{
			"events[0].controller.tick: must be more than 0, such as 1s (got 0s)",
			"events[0].controller.target_p95: must be more than 0, such as 1s (got 0s)",
			"events[0].controller.target_error_rate: must be between 0 and 1, exclusive (got 1)",
			"events[0].controller.min_active: must not be more than initial_active (5) (got 6)",
			"events[0].controller.increase: must be 0 (5% of the limit, at least 2) or more (got -1)",
			"events[0].controller.decrease: must be between 0 and 1, exclusive (got 0)"}},
		{"controller zeros", func(e *Event) { e.Controller.InitialActive, e.Controller.MinActive = 0, 0 }, []string{
			"events[0].controller.initial_active: must be 1 or more (got 0)",
			"events[0].controller.min_active: must be 1 or more (got 0)"}},
		{"lanes", func(e *Event) {
			e.Lanes = []Lane{
				{Name: "presale", Priority: true, InviteSecret: testSecret},
				{Name: "fanclub", Share: 0.3, AccountSecret: testSecret, AllowlistFile: "/etc/waitroom/fans.txt"},
				{Name: "public", Share: 0.7},
			}
		}, nil},
		{"lane problems", func(e *Event) {
			e.Lanes = []Lane{
				{Name: "presale", Priority: true, Share: 0.5},
				{Name: "presale", InviteSecret: "short-SECRET", AllowlistFile: "f"},
				{Name: "Fans", Share: 1.5, AccountSecret: " " + testSecret},
				{Name: "public", InviteSecret: testSecret, AccountSecret: testSecret, AllowlistFile: "f"},
			}
		}, []string{
			"events[0].lanes[0].share: is set on a priority lane, which is served before the others: share applies to non-priority lanes only",
			"events[0].lanes[0]: has no way in: set invite_secret (invite codes) or account_secret (account proofs from the origin)",
			"events[0].lanes[1].name: repeats lanes[0].name",
			"events[0].lanes[1].invite_secret: must be at least 32 bytes (got 12); openssl rand -hex 32 makes a good one",
			"events[0].lanes[1].allowlist_file: needs account_secret: the allowlist is checked against proven account ids",
			`events[0].lanes[2].name: must be 1 to 64 characters from [a-z0-9_-] (got "Fans")`,
			"events[0].lanes[2].share: must be between 0 and 1 (got 1.5)",
			"events[0].lanes[2].account_secret: starts or ends with white space (a trailing newline from a secrets file?)",
			"events[0].lanes[3].invite_secret: is set on the public lane, which everyone may join",
			"events[0].lanes[3].account_secret: is set on the public lane, which everyone may join",
			"events[0].lanes[3].allowlist_file: is set on the public lane, which everyone may join"}},
		{"page", func(e *Event) {
			e.Page = Page{
				LogoURL:         "https://cdn.example.com/logo.svg",
				Colors:          Colors{Background: "#fff", Text: "#1A2B3C", Accent: "#e4002b"},
				DefaultLanguage: LangGerman,
				Texts:           map[Language]map[string]string{"de": {"title": "Sommertour", "draw.explain": "Die Reihenfolge wird gelost."}, "es": {}},
				TemplateDir:     "/etc/waitroom/templates/summer",
			}
		}, nil},
		{"page on this site", func(e *Event) { e.Page.LogoURL = "/static/logo.png" }, nil},
		{"page problems", func(e *Event) {
			e.Page = Page{
				LogoURL:         "http://cdn.example.com/logo.svg",
				Colors:          Colors{Background: "white", Text: "#12345", Accent: "#fff;}body{x:y"},
				DefaultLanguage: "fr",
				Texts:           map[Language]map[string]string{"fr": {"title": "x"}, "en": {"Title": "x", "ok": "\xff"}},
			}
		}, []string{
			`events[0].page.logo_url: must be an https:// URL or a path on this site (got "http://cdn.example.com/logo.svg")`,
			`events[0].page.colors.background: must be a colour such as #1a2b3c or #abc (got "white")`,
			`events[0].page.colors.text: must be a colour such as #1a2b3c or #abc (got "#12345")`,
			`events[0].page.colors.accent: must be a colour such as #1a2b3c or #abc (got "#fff;}body{x:y")`,
			`events[0].page.default_language: must be en, de or es (got "fr")`,
			`events[0].page.texts.en: has the key "Title": text keys are 1 to 64 characters from [a-z0-9_.]`,
			"events[0].page.texts.en.ok: must be valid UTF-8 text",
			"events[0].page.texts.fr: is not a language of the page: use en, de or es"}},
		{"logo breaking out of CSS", func(e *Event) { e.Page.LogoURL = "https://x.example/a.png)" }, []string{
			`events[0].page.logo_url: must be an https:// URL or a path on this site ("https://x.example/a.png)" holds a quote, bracket, backslash, space or control character)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validProxy()
			tt.change(&c.Events[0])
			wantProblems(t, ValidateFor(c, RoleProxy), tt.want...)
		})
	}
}

func TestValidateEventIDs(t *testing.T) {
	t.Parallel()
	c := validProxy()
	c.Events = append(c.Events, c.Events[0])
	wantProblems(t, ValidateFor(c, RoleProxy), "events[1].id: repeats events[0].id")
}

// TestValidateProxyHidesSecrets checks that no secret of the proxy's
// sections reaches a message, whatever is wrong with it.
func TestValidateProxyHidesSecrets(t *testing.T) {
	t.Parallel()
	c := validProxy()
	c.Serve.Keys.Signing.Secret = "short-SECRET"
	c.Serve.Keys.Verify = []Key{{ID: "k0", Algorithm: AlgEdDSA, Secret: "SECRET"}}
	c.Serve.Bypass.Secret = "SECRET"
	c.Serve.Inventory = InventoryClient{URL: "http://user:SECRET@h:1", Token: "SECRET", Refresh: 1}
	c.Admin.Token = "SECRET SECRET SECRET"
	c.Events[0].Lanes = []Lane{{Name: "p", InviteSecret: "SECRET", AccountSecret: "SECRET\n"}}
	err := ValidateFor(c, RoleProxy)
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("got %v", err)
	}
	if n := len(Problems(err)); n != 9 {
		t.Errorf("got %d problems, want 9:\n%v", n, err)
	}
}

// TestDefaultsMatchAdmission keeps the config defaults in step with the
// admission engine's.
func TestDefaultsMatchAdmission(t *testing.T) {
	t.Parallel()
	eq(t, DefaultAdmissionRedisPrefix, redisstore.DefaultPrefix)
	e := DefaultEvent()
	e.ID = "x"
	e.OnSaleAt = At(onSale)
	cfg, err := e.AdmissionConfig(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := admission.EventConfig{
		ID: "x", QueueOpensAt: onSale, OnSaleAt: onSale,
		Tranche: admission.DefaultTranche, SessionDuration: admission.DefaultSessionDuration,
		NoShowGrace: admission.DefaultNoShowGrace, CompleteGrace: admission.DefaultCompleteGrace,
		VisitorsPerSeat: admission.DefaultVisitorsPerSeat,
		Controller: admission.ControllerConfig{
			Tick: admission.DefaultTick, TargetP95: admission.DefaultTargetP95,
			TargetErrorRate: admission.DefaultTargetErrorRate, InitialActive: admission.DefaultInitialActive,
			MinActive: admission.DefaultMinActive, Decrease: admission.DefaultDecrease,
		},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got  %+v\nwant %+v", cfg, want)
	}
}
