// Tests of the serve section's validation (validate_serve.go): listeners,
// limits, TLS, cookies, keys and the rest of serve.

package config

import (
	"math"
	"strings"
	"testing"
	"time"
)

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
			"serve.tls.cert_file: must be set with tls.listen (a PEM certificate chain), or acme.domains",
			"serve.tls.key_file: must be set with tls.listen (the certificate's PEM private key), or acme.domains",
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
			`serve.binding[1]: must be user_agent, ip_prefix or tls_stack (got "tls")`,
			"serve.binding[2]: repeats binding[0]"}},
		{"no binding", func(c *Config) { c.Serve.Binding = []BindingSignal{} }, nil},
		{"tls_stack without a JA4", func(c *Config) { c.Serve.Binding = []BindingSignal{BindUserAgent, BindTLSStack} }, []string{
			"serve.binding[1]: tls_stack needs the client's JA4: an event's challenge on, and TLS ending here (serve.tls.listen) or bot_defence.ja4_header"}},

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
			c.Serve.RateLimits = RateLimits{PerIP: Bucket{Rate: -1, Burst: 5}, PerPrefix: Bucket{Rate: 1, Burst: 0}, IPv4Prefix: 33, IPv6Prefix: 8, TableSize: 0,
				WrongInvites: WrongInvites{PerIP: Bucket{Rate: 0.0001, Burst: 1}, PerPrefix: Bucket{Rate: 1, Burst: 0}}}
		}, []string{
			"serve.rate_limits.per_ip.rate: must be 0 (no limit) or more requests per second (got -1)",
			"serve.rate_limits.per_prefix.burst: must be 1 or more with a rate (got 0)",
			"serve.rate_limits.ipv4_prefix: must be between 8 and 32 (got 33)",
			"serve.rate_limits.ipv6_prefix: must be between 16 and 128 (got 8)",
			"serve.rate_limits.table_size: must be 1 or more (got 0)",
			"serve.rate_limits.wrong_invites.per_ip.rate: must be at least 0.001 codes per second: wrong invite codes are always limited (got 0.0001)",
			"serve.rate_limits.wrong_invites.per_prefix.burst: must be 1 or more with a rate (got 0)"}},
		{"wrong invites off", func(c *Config) { c.Serve.RateLimits.WrongInvites.PerIP = Bucket{} }, []string{
			"serve.rate_limits.wrong_invites.per_ip.rate: must be at least 0.001 codes per second: wrong invite codes are always limited (got 0)"}},
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
		{"shared rate limits on redis", func(c *Config) {
			c.Admission.Store = StoreRedis
			c.Admission.Redis.URL = "redis://127.0.0.1:6379/0"
			c.Serve.RateLimits.Shared = true
		}, nil},
		{"shared rate limits without redis", func(c *Config) { c.Serve.RateLimits.Shared = true }, []string{
			"serve.rate_limits.shared: needs admission.store: redis (the budget is kept in the admission store's Redis; an embedded store has one replica, whose buckets are the room's)"}},
		{"admission problems", func(c *Config) {
			c.Admission = Admission{Store: "memory", Redis: Redis{URL: "redis://h:1/0", Cluster: []string{"h:1"}, PoolSize: -2}, RedisPrefix: "{wr}:", Replica: "web 1",
				Lease: Duration(100 * time.Millisecond)}
		}, []string{
			`admission.store: must be embedded or redis (got "memory")`,
			"admission.redis: set url or cluster, not both",
			"admission.redis.pool_size: must be 0 (the client's default) or more (got -2)",
			`admission.redis_prefix: must not contain { or }: they would change the keys' Redis Cluster hash slot (got "{wr}:")`,
			`admission.replica: must be at most 128 printable ASCII characters without spaces (got "web 1")`,
			"admission.lease: must be from 500ms to 1m, such as 5s (got 100ms)"}},
		{"admission redis without address", func(c *Config) {
			c.Admission.Store = StoreRedis
			c.Admission.DataDir = ""
			c.Admission.RedisPrefix = ""
		}, []string{
			"admission.redis: set url (standalone Redis), cluster (Redis Cluster seed addresses) or sentinel (master name and Sentinel addresses) with store: redis",
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
			`serve.keys.signing.algorithm: must be HS256 or EdDSA (got "RS256"); did you mean HS256?`}},
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
