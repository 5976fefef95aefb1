package config

import (
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/ascii"
)

// Serve configures the waiting-room reverse proxy (waitroom serve).
type Serve struct {
	// Plain-HTTP listen address, host:port. Empty disables plain HTTP; then
	// tls.listen is required.
	Listen string `yaml:"listen"`
	// HTTPS listener, with the certificate and key waitroom terminates TLS
	// with.
	TLS ServeTLS `yaml:"tls"`
	// The URL visitors use to reach the site, scheme and host only
	// (https://tickets.example.com), when it differs from what waitroom
	// sees: behind a load balancer or CDN that terminates TLS. With
	// cookies.secure auto, an https URL (or tls.listen) makes the cookies
	// Secure and gives them the __Host- prefix (__Secure- with
	// cookies.domain). The room page's og:url (with the event's
	// landing_path) and an absolute og:image for a same-site logo come
	// from it, never from a request's Host. Empty: unknown (no og:url).
	PublicURL string `yaml:"public_url"`
	// Path prefix waitroom reserves for itself (the waiting-room API, the
	// page's assets, /auth, /jwks.json). It starts with "/" and does not
	// end with one; no route may point inside it.
	Prefix string `yaml:"prefix"`
	// Addresses of the proxies and load balancers in front of waitroom,
	// as CIDRs (10.0.0.0/8) or bare IPs. Only their client_ip_header,
	// X-Forwarded-Proto and X-Forwarded-Host (and PROXY protocol headers)
	// are believed, for the one client address that rate limits, bypass
	// cidrs, risk signals and device binding use; from anyone else those
	// headers are ignored and the peer is the client, and the origin
	// never gets the client's own copies of them.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// Header a trusted proxy puts the client's address in.
	// X-Forwarded-For: the right-most address that is not itself a
	// trusted proxy is the client. Forwarded (RFC 7239): the same walk
	// over the for= of each element; "unknown" and obfuscated identifiers
	// count as malformed. Any other name (X-Real-IP, CF-Connecting-IP,
	// True-Client-IP) is a single-address header: believed only when
	// it appears once with exactly one address. Where the header is
	// missing or malformed, the client is the last trusted hop (the peer,
	// for a single-address header). Headers waitroom sets or decides on
	// (X-Waitroom-*, hop-by-hop ones, Host, Cookie, X-Forwarded-Proto and
	// -Host, the bypass header) are refused.
	ClientIPHeader string `yaml:"client_ip_header"`
	// What happens to a path parameter (";x" in /events;x/seats, which
	// Tomcat, Jetty and Spring strip before they route): refuse (400) or
	// strip (removed from the path that is routed and forwarded).
	PathParameters PathParameters `yaml:"path_parameters"`
	// Host an HTTP/1.0 request without a Host header is taken to be for
	// (host[:port]); empty refuses such requests with 400.
	DefaultHost string `yaml:"default_host"`
	// Expect a PROXY protocol header (v1 or v2, as HAProxy, AWS NLB and
	// other layer-4 balancers send it) at the start of every connection on
	// listen and tls.listen; its source address is then the peer, to
	// which client_ip_header still applies. Connections from addresses
	// outside trusted_proxies, and connections without a valid header,
	// are closed. Requires trusted_proxies.
	ProxyProtocol bool `yaml:"proxy_protocol"`
	// How long a balancer has, after connecting, to send the whole PROXY
	// protocol header.
	ProxyProtocolTimeout Duration `yaml:"proxy_protocol_timeout"`
	// Largest request header block, in bytes; larger requests get 431. At
	// least 16384, so that real-world cookies fit; at most 1 MiB.
	MaxHeaderBytes int `yaml:"max_header_bytes"`
	// Largest request body forwarded, in bytes; bodies stream to the
	// origin and a larger one gets 413. 0 means no limit.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// Longest time to read one request's body after its head, however
	// fast it flows (uploads that take longer are cut off with 408).
	ReadTimeout Duration `yaml:"read_timeout"`
	// Longest time to receive a request's head (request line and headers):
	// from the connection's opening for its first request, from the first
	// byte of each later one. A client sending its head slower (slowloris)
	// gets 408 and is disconnected.
	HeaderTimeout Duration `yaml:"header_timeout"`
	// Longest wait for a request body's first bytes after the head; it is
	// also the grace before body_min_rate applies. No origin connection is
	// taken for a request until its body's first bytes have arrived.
	BodyTimeout Duration `yaml:"body_timeout"`
	// Slowest a request body may arrive, in bytes a second: t seconds
	// after the head, at least body_min_rate × (t − body_timeout) bytes
	// must have arrived, or the body is cut off (408, connection closed)
	// and the origin sees an unfinished request. 0 turns the rate off
	// (read_timeout still bounds the body).
	BodyMinRate int64 `yaml:"body_min_rate"`
	// Most connections open at once on each of the proxy's listeners
	// (HTTP, HTTPS, and the in-process sidecar's with with_inventory);
	// beyond it new connections wait in the kernel's backlog until one
	// closes. Keep it below the file descriptor limit
	// (ulimit -n). 0 means no limit.
	MaxConnections int `yaml:"max_connections"`
	// Most connections open at once from one client address (an IPv4
	// address, an IPv6 /64); more are closed at once. trusted_proxies are
	// exempt. Mind carrier-grade NAT: many visitors can share one address.
	// 0 means no limit.
	MaxConnectionsPerClient int `yaml:"max_connections_per_client"`
	// Most requests handled at once, head received and not yet answered
	// (waiting-room API, pages and requests forwarded to origins alike);
	// beyond it (or beyond a class's share, see reserved) requests get 503
	// with Retry-After. 0 means no limit.
	MaxInFlight int `yaml:"max_in_flight"`
	// Shares of max_in_flight, and of every origin's max_in_flight, that
	// requests without a pass can never take.
	Reserved ReservedShares `yaml:"reserved"`
	// Longest time to write one response; 0 means no limit, which
	// server-sent events and long downloads need.
	WriteTimeout Duration `yaml:"write_timeout"`
	// How long an idle keep-alive connection is kept open.
	IdleTimeout Duration `yaml:"idle_timeout"`
	// On shutdown, how long requests in progress may take to finish before
	// connections are closed; 0 closes them at once.
	ShutdownGrace Duration `yaml:"shutdown_grace"`
	// Also run the seat-hold sidecar configured in the inventory section,
	// in this process (on its own listener, inventory.listen, for the
	// origins). Events linked to inventory then read remaining seats from
	// it directly; leave serve.inventory.url empty.
	WithInventory bool `yaml:"with_inventory"`
	// Where the remaining seats of events linked to inventory
	// (events[].inventory_event) are read.
	Inventory InventoryClient `yaml:"inventory"`
	// How many verified passes are remembered (least recently used first
	// out), so that a gated request costs one lookup and no cryptography.
	// At least 1.
	PassCacheSize int `yaml:"pass_cache_size"`
	// Device-binding signals hashed into tickets and passes, so that a
	// copied cookie fails elsewhere: user_agent and ip_prefix (the client
	// address's /24 for IPv4, /48 for IPv6). Without the key, both; an
	// explicit empty list ([]) binds to nothing. A visitor whose network
	// changes (Wi-Fi to mobile data) loses their ticket with ip_prefix:
	// list only user_agent for an audience that roams. tls_stack adds the
	// client's TLS stack (its JA4 less what a resumed session changes),
	// so that a pass a browser earned fails in a script that copies the
	// User-Agent; it needs an event's challenge on, and TLS ending here
	// (serve.tls) or bot_defence.ja4_header.
	Binding []BindingSignal `yaml:"binding"`
	// Keys that sign and verify tickets and passes.
	Keys Keys `yaml:"keys"`
	// Names and attributes of the ticket and pass cookies.
	Cookies Cookies `yaml:"cookies"`
	// Requests that pass every gate without a queue: staff and monitoring.
	Bypass Bypass `yaml:"bypass"`
	// Search engines' crawlers that pass queue routes without queueing:
	// a request passes when its User-Agent contains one of user_agents
	// AND its client address (as trusted_proxies establish it) is in the
	// ranges of ip_ranges_file, which the crawler's operator publishes. It
	// gets no ticket and no pass, and routes that block without a pass
	// stay blocked. Counted in waitroom_crawler_passes_total (and
	// waitroom_crawler_spoofed_total for the user agent from elsewhere).
	Crawlers []Crawler `yaml:"crawlers"`
	// Token-bucket rate limits on the waiting-room API (prefix/api/*), per
	// client address and per network.
	RateLimits RateLimits `yaml:"rate_limits"`
}

// PathParameters is a value of serve.path_parameters.
type PathParameters string

// Values of serve.path_parameters.
const (
	PathParametersRefuse PathParameters = "refuse"
	PathParametersStrip  PathParameters = "strip"
)

// ReservedShares keeps capacity for admitted visitors and the waiting
// room. A class always gets its reserved share when it needs it; capacity
// nobody reserves, or reserved but unused by its class, is shared. So
// anonymous traffic (pass routes, paths no route matches) can hold at
// most 1 − admitted − api of serve.max_in_flight and 1 − admitted of an
// origin's max_in_flight, however many stalled uploads it sends.
type ReservedShares struct {
	// Share kept for requests with a valid pass on a gated route (and
	// bypasses), from 0 to less than 1.
	Admitted float64 `yaml:"admitted"`
	// Share of serve.max_in_flight kept for the waiting room: its API
	// (joins, status polls), pages and assets, from 0 to less than 1;
	// admitted + api is less than 1.
	API float64 `yaml:"api"`
}

// ServeTLS configures the HTTPS listener.
type ServeTLS struct {
	// HTTPS listen address, host:port; empty disables HTTPS.
	Listen string `yaml:"listen"`
	// PEM certificate chain, leaf first. Required with listen unless
	// acme.domains is set.
	CertFile string `yaml:"cert_file"`
	// PEM private key of the certificate. Required with listen unless
	// acme.domains is set; keep it readable by waitroom only.
	KeyFile string `yaml:"key_file"`
	// Oldest TLS version accepted: "1.2" or "1.3".
	MinVersion TLSVersion `yaml:"min_version"`
	// Certificates obtained and renewed automatically from an ACME CA
	// (Let's Encrypt by default), instead of cert_file and key_file.
	ACME ACME `yaml:"acme"`
}

// ACME configures automatic certificates for the HTTPS listener. The CA
// checks each domain with TLS-ALPN-01 on tls.listen (port 443 must reach
// it directly, no TLS-terminating balancer in between) and, when listen
// is set, HTTP-01 on listen (port 80). Certificates and the account key
// are kept in admission.data_dir/acme, or in Redis under
// admission.redis_prefix with store: redis, so that replicas share them
// and only one orders at a time. Setting domains accepts the CA's terms
// of service.
type ACME struct {
	// DNS names to obtain certificates for, such as tickets.example.com
	// (no wildcards, no IP addresses). A TLS handshake for any other name
	// gets no certificate. Empty disables ACME.
	Domains []string `yaml:"domains"`
	// Contact address the CA may write to about the certificates
	// (expiry, revocation); empty registers without one.
	Email string `yaml:"email"`
	// The CA's ACME directory, https (http only on a loopback address,
	// for tests).
	DirectoryURL string `yaml:"directory_url"`
	// PEM file of the root certificates that the directory's HTTPS is
	// verified against, for a private ACME CA (step-ca, pebble); empty
	// uses the system's roots.
	CAFile string `yaml:"ca_file"`
	// How long before expiry a certificate is renewed (1h to 720h). Keep
	// it well under the CA's certificate lifetime (Let's Encrypt: 90 days,
	// 45 from 2028), or every renewal is due at once and orders again.
	RenewBefore Duration `yaml:"renew_before"`
}

// Enabled reports whether ACME is on.
func (a *ACME) Enabled() bool { return len(a.Domains) > 0 }

// TLSVersion is a value of serve.tls.min_version.
type TLSVersion string

// Values of serve.tls.min_version.
const (
	TLS12 TLSVersion = "1.2"
	TLS13 TLSVersion = "1.3"
)

// InventoryClient says where the proxy reads linked events' remaining
// seats.
type InventoryClient struct {
	// Base URL of a seat-hold sidecar, http://host:port or https://. Empty
	// with with_inventory: the sidecar in this process. Empty without it:
	// no event may be linked to inventory.
	URL string `yaml:"url"`
	// Bearer token for the sidecar at url, from the environment
	// (${WAITROOM_INVENTORY_TOKEN}); empty when that sidecar runs without
	// one. Not used for the in-process sidecar.
	Token string `yaml:"token"`
	// How often remaining seats are read.
	Refresh Duration `yaml:"refresh"`
}

// DefaultBinding is serve.binding when the key is absent: the User-Agent
// and the client's network, so a copied ticket or pass fails in another
// browser and on another network.
func DefaultBinding() []BindingSignal { return []BindingSignal{BindUserAgent, BindIPPrefix} }

// BindingSignal is a value of serve.binding.
type BindingSignal string

// Values of serve.binding.
const (
	BindUserAgent BindingSignal = "user_agent"
	BindIPPrefix  BindingSignal = "ip_prefix"
	BindTLSStack  BindingSignal = "tls_stack"
)

// Keys configures the token keys.
type Keys struct {
	// The key new tickets and passes are signed with.
	Signing Key `yaml:"signing"`
	// Older keys still accepted when verifying, for rotation: make the new
	// key the signing key, keep the old one here until the tokens it
	// signed have expired (ticket lifetime, or session_duration for
	// passes). Each element starts from algorithm HS256.
	Verify []Key `yaml:"verify"`
}

// Key is one token key: an HS256 shared secret or an Ed25519 key pair.
// Secrets and key files are read at start-up by Load, never by Validate.
type Key struct {
	// Key id, written into every token's header (kid); 1 to 64 bytes,
	// unique among signing and verify.
	ID string `yaml:"id"`
	// HS256 (HMAC-SHA256 with a shared secret) or EdDSA (Ed25519; origins
	// can then verify passes with /jwks.json, knowing no secret).
	Algorithm KeyAlgorithm `yaml:"algorithm"`
	// HS256 secret, at least 32 bytes and not guessable (no placeholder,
	// repeated pattern or handful of characters), from the environment
	// (${WAITROOM_SIGNING_SECRET}); waitroom keygen -secret makes a good
	// one. Set this or secret_file.
	Secret string `yaml:"secret"`
	// File holding the HS256 secret (one trailing newline is ignored),
	// read and checked like secret at start-up. Set this or secret.
	SecretFile string `yaml:"secret_file"`
	// EdDSA: PEM file with the Ed25519 private key (PKCS#8, "PRIVATE
	// KEY"; waitroom keygen writes one). Required for the signing key; a
	// verification key may give this or public_key_file.
	PrivateKeyFile string `yaml:"private_key_file"`
	// EdDSA: PEM file with the Ed25519 public key (PKIX, "PUBLIC KEY"),
	// for a verification key only.
	PublicKeyFile string `yaml:"public_key_file"`
}

// KeyAlgorithm is a value of serve.keys.*.algorithm.
type KeyAlgorithm string

// Values of serve.keys.*.algorithm.
const (
	AlgHS256 KeyAlgorithm = "HS256"
	AlgEdDSA KeyAlgorithm = "EdDSA"
)

// DefaultVerifyKey is the value every element of serve.keys.verify starts
// from before the file's keys are applied.
func DefaultVerifyKey() Key { return Key{Algorithm: DefaultKeyAlgorithm} }

// UnmarshalYAML decodes a key, starting a new list element from
// DefaultVerifyKey.
func (k *Key) UnmarshalYAML(n *yaml.Node) error {
	if *k == (Key{}) {
		*k = DefaultVerifyKey()
	}
	type plain Key
	return decodeMapping(n, "Key", (*plain)(k))
}

// Cookies configures the ticket and pass cookies. Both are HttpOnly and
// have Path=/.
type Cookies struct {
	// Name of the ticket cookie (the visitor's place in the queue).
	Ticket string `yaml:"ticket"`
	// Name of the pass cookie (admission to the event's gated paths).
	Pass string `yaml:"pass"`
	// Domain attribute, to share the cookies with subdomains
	// (example.com); empty sets host-only cookies.
	Domain string `yaml:"domain"`
	// Secure attribute: auto, always or never. auto is always when
	// waitroom terminates TLS (tls.listen) or public_url is https;
	// otherwise a cookie is Secure when its request came over HTTPS
	// (per a trusted proxy's X-Forwarded-Proto). Whenever the cookies are
	// always Secure their names get the __Host- prefix (__Secure- with a
	// domain), which browsers hold them to: __Host-wr_pass_summer.
	Secure CookieSecure `yaml:"secure"`
	// SameSite attribute: lax or strict.
	SameSite SameSite `yaml:"same_site"`
	// Send the pass cookie on to the origin; by default waitroom removes
	// it and the origin gets X-Waitroom-Visitor and X-Waitroom-Event
	// instead.
	ForwardPass bool `yaml:"forward_pass"`
}

// CookieSecure is a value of serve.cookies.secure.
type CookieSecure string

// CookiesAlwaysSecure reports whether every cookie is Secure (and so has
// a prefixed name): secure: always, or auto with tls.listen set or an
// https public_url.
func (s *Serve) CookiesAlwaysSecure() bool {
	switch s.Cookies.Secure {
	case SecureAlways:
		return true
	case SecureAuto:
		return s.TLS.Listen != "" || ascii.HasPrefixFold(s.PublicURL, "https://")
	}
	return false
}

// Values of serve.cookies.secure.
const (
	SecureAuto   CookieSecure = "auto"
	SecureAlways CookieSecure = "always"
	SecureNever  CookieSecure = "never"
)

// SameSite is a value of serve.cookies.same_site.
type SameSite string

// Values of serve.cookies.same_site.
const (
	SameSiteLax    SameSite = "lax"
	SameSiteStrict SameSite = "strict"
)

// Bypass configures requests that skip the queue. Every bypass is counted
// in the metrics.
type Bypass struct {
	// Client networks that bypass, as CIDRs or bare IPs (staff offices,
	// uptime monitors). The client address is the one trusted_proxies
	// establish.
	CIDRs []string `yaml:"cidrs"`
	// Request header that carries the bypass secret. waitroom removes it
	// before forwarding.
	Header string `yaml:"header"`
	// The bypass secret, at least 16 characters, from the environment
	// (${WAITROOM_BYPASS_SECRET}); empty disables the header bypass.
	Secret string `yaml:"secret"`
}

// Crawler is one allowlisted crawler (serve.crawlers).
type Crawler struct {
	// Name in metrics and logs: 1 to 64 characters from [a-z0-9_-]
	// (googlebot).
	Name string `yaml:"name"`
	// Substrings of the crawler's User-Agent, ASCII case ignored, at
	// least 3 characters each (Googlebot, bingbot).
	UserAgents []string `yaml:"user_agents"`
	// File of the address ranges the crawler's operator publishes:
	// Google's googlebot.json, Bing's bingbot.json
	// ({"prefixes":[{"ipv4Prefix":"66.249.64.0/27"},{"ipv6Prefix":...}]}),
	// or one CIDR a line. It is read and must parse when the
	// configuration is checked and at start-up (a restart picks up a new
	// version); a range wider than a /8 (IPv4) or /32 (IPv6) is refused.
	IPRangesFile string `yaml:"ip_ranges_file"`
	// The file's format: auto (detected, the default), gcp (Google's and
	// Bing's JSON), cidr, aws, azure, oracle or geofeed.
	IPRangesFormat string `yaml:"ip_ranges_format"`
}

// RateLimits configures the token buckets on the waiting-room API.
type RateLimits struct {
	// Bucket per client address.
	PerIP Bucket `yaml:"per_ip"`
	// Bucket per client network (ipv4_prefix or ipv6_prefix wide), which
	// catches one party spread over many addresses.
	PerPrefix Bucket `yaml:"per_prefix"`
	// IPv4 network width of per_prefix, 8 to 32 bits. (The ip_prefix
	// binding is always the /24.)
	IPv4Prefix int `yaml:"ipv4_prefix"`
	// IPv6 network width of per_prefix, 16 to 128 bits. (The ip_prefix
	// binding is always the /48.)
	IPv6Prefix int `yaml:"ipv6_prefix"`
	// How many addresses and networks are tracked (least recently seen
	// first out). At least 1.
	TableSize int `yaml:"table_size"`
	// Share the budgets with the other replicas: false (the default) gives
	// every replica its own buckets, so an address spread over N replicas
	// by a load balancer gets N times the rate; true keeps one budget per
	// address and network for the whole room in the admission store's
	// Redis (a GCRA script: one round trip per API request, pipelined),
	// behind each replica's own buckets. Needs admission.store: redis.
	// When Redis does not answer within 100 ms, each replica's buckets
	// decide alone (waitroom_rate_limit_shared_errors_total counts it).
	// Applies to per_ip, per_prefix and wrong_invites.
	Shared bool `yaml:"shared"`
	// Budget of wrong invite codes (a join whose code no lane accepts, or
	// one already used), per client address and network: once it is
	// spent, every join with a code is refused with 429 and Retry-After,
	// unread, until it refills, so that codes cannot be guessed. Right
	// codes cost nothing. Both rates must be above 0.
	WrongInvites WrongInvites `yaml:"wrong_invites"`
}

// WrongInvites are the buckets of wrong invite codes.
type WrongInvites struct {
	// Bucket per client address (rate in codes per second: 0.02 is one
	// every 50 s).
	PerIP Bucket `yaml:"per_ip"`
	// Bucket per client network (ipv4_prefix or ipv6_prefix wide).
	PerPrefix Bucket `yaml:"per_prefix"`
}

// Bucket is one token bucket: rate tokens a second, up to burst at once.
type Bucket struct {
	// Requests per second allowed on average; 0 disables this bucket.
	Rate float64 `yaml:"rate"`
	// Requests allowed at once after a quiet spell; at least 1 when rate
	// is set.
	Burst int `yaml:"burst"`
}

// Admin configures the operator listener.
type Admin struct {
	// Listen address of the operator API, /metrics, /healthz and /readyz,
	// host:port. Keep it private; empty disables it.
	Listen string `yaml:"listen"`
	// Bearer token the operator API requires, at least 16 characters, from
	// the environment (${WAITROOM_ADMIN_TOKEN}). Required when listen is
	// set.
	Token string `yaml:"token"`
	// Most connections open at once on the admin listener; beyond it new
	// ones wait in the backlog. 0 means no limit. (Its header, read and
	// idle timeouts and header size are serve's.)
	MaxConnections int `yaml:"max_connections"`
}

// Admission configures where the queues live.
type Admission struct {
	// embedded (queues in this process, journaled to data_dir: one
	// replica) or redis (shared by several replicas, which elect one
	// leader per event).
	Store StoreKind `yaml:"store"`
	// Directory of the embedded admission store. It is created if missing
	// and locked against a second process; it must not be, or contain,
	// inventory.data_dir.
	DataDir string `yaml:"data_dir"`
	// Connection to Redis, used with store: redis.
	Redis Redis `yaml:"redis"`
	// Prefix of every admission key in Redis, so that several
	// installations can share one Redis; no braces (they would change the
	// keys' cluster hash slot).
	RedisPrefix string `yaml:"redis_prefix"`
	// This process's name in the per-event leader lease; empty uses the
	// host name and process id. Unique per replica.
	Replica string `yaml:"replica"`
	// How long an event's leadership lasts without renewal (store: redis):
	// when the leader dies without a word (kill -9, a lost machine),
	// another replica takes over at its first tick after the lease ran out
	// and admits at that tick, from the saved controller state and every
	// replica's published measurements; a dead replica's measurements are
	// forgotten within it too. 500ms to 1m; raised to two ticks of an
	// event whose tick is longer. Shorter hands over sooner, and loses the
	// lead to a Redis stall of that length.
	Lease Duration `yaml:"lease"`
	// How long the per-minute records of each event (arrivals, admitted,
	// active visitors, origin latency and errors, the controller's
	// target, seats sold, no-shows, bot-defence outcomes, ETA honesty)
	// are kept in the store after they are written, for waitroom report
	// and GET /admin/v1/events/{id}/report. 1h to 8760h (a year; 0: the
	// default); Redis expires them, the embedded store prunes them.
	ReportRetention Duration `yaml:"report_retention"`
}

// Defaults of the serve, admin and admission sections.
const (
	DefaultServeListen       = "127.0.0.1:8080"
	DefaultTLSMinVersion     = TLS12
	DefaultPrefix            = "/_wr"
	DefaultClientIPHeader    = "X-Forwarded-For"
	DefaultPathParameters    = PathParametersRefuse
	DefaultMaxHeaderBytes    = 32 << 10
	DefaultServeMaxBodyBytes = 64 << 20
	DefaultServeReadTimeout  = 60 * time.Second
	DefaultServeWriteTimeout = 60 * time.Second
	DefaultIdleTimeout       = 75 * time.Second
	DefaultHeaderTimeout     = 10 * time.Second
	DefaultBodyTimeout       = 20 * time.Second
	// DefaultBodyMinRate is 1 KiB/s, about what Apache's mod_reqtimeout
	// asks (500 bytes/s) with room for slow mobile uploads.
	DefaultBodyMinRate             = 1 << 10
	DefaultMaxConnections          = 10_000
	DefaultMaxConnectionsPerClient = 512
	DefaultServeMaxInFlight        = 10_000
	DefaultReservedAdmitted        = 0.25
	DefaultReservedAPI             = 0.25
	DefaultAdminMaxConnections     = 64
	DefaultShutdownGrace           = 10 * time.Second
	DefaultInventoryRefresh        = 2 * time.Second
	DefaultPassCacheSize           = 100_000

	// DefaultProxyProtocolTimeout equals proxyproto.DefaultTimeout.
	DefaultProxyProtocolTimeout = 5 * time.Second

	DefaultKeyID        = "k1"
	DefaultKeyAlgorithm = AlgHS256

	DefaultTicketCookie = "wr_ticket"
	DefaultPassCookie   = "wr_pass"
	DefaultCookieSecure = SecureAuto
	DefaultSameSite     = SameSiteLax

	DefaultBypassHeader = "X-Waitroom-Bypass"

	DefaultPerIPRate       = 5
	DefaultPerIPBurst      = 20
	DefaultPerPrefixRate   = 100
	DefaultPerPrefixBurst  = 400
	DefaultIPv4Prefix      = 24
	DefaultIPv6Prefix      = 48
	DefaultRateLimitsTable = 100_000

	// Wrong invite codes: 10 at once from an address, then one every
	// 50 s; 100 from a network, then one every 5 s.
	DefaultWrongInvitesPerIPRate      = 0.02
	DefaultWrongInvitesPerIPBurst     = 10
	DefaultWrongInvitesPerPrefixRate  = 0.2
	DefaultWrongInvitesPerPrefixBurst = 100

	DefaultAdminListen = "127.0.0.1:9090"

	// DefaultACMEDirectoryURL is Let's Encrypt's production directory.
	DefaultACMEDirectoryURL = "https://acme-v02.api.letsencrypt.org/directory"
	DefaultACMERenewBefore  = 30 * 24 * time.Hour
	MinACMERenewBefore      = time.Hour
	MaxACMERenewBefore      = 30 * 24 * time.Hour

	DefaultAdmissionStore   = StoreEmbedded
	DefaultAdmissionDataDir = "./waitroom-data/admission"
	// DefaultAdmissionRedisPrefix repeats admission/redisstore's
	// DefaultPrefix (a test keeps them equal): importing the Redis store
	// here only for a constant would tie configuration to a store.
	DefaultAdmissionRedisPrefix = "wr:adm:"
	DefaultAdmissionLease       = Duration(admission.DefaultLease)
	DefaultReportRetention      = Duration(admission.DefaultMinuteRetention)
)

// Limits of the serve, admin and admission sections that Validate
// enforces.
const (
	MinMaxHeaderBytes     = 16 << 10
	MaxMaxHeaderBytes     = 1 << 20
	MinSecretLength       = 32 // HS256 secrets, invite and account secrets, in bytes
	MinAdminTokenLength   = 16
	MinAdmissionLease     = 500 * time.Millisecond
	MaxAdmissionLease     = time.Minute
	MinReportRetention    = time.Hour
	MaxReportRetention    = 365 * 24 * time.Hour
	MinBypassSecretLength = 16
	MaxKeyIDLength        = 64
)

func defaultServe() Serve {
	return Serve{
		Listen: DefaultServeListen,
		TLS: ServeTLS{MinVersion: DefaultTLSMinVersion, ACME: ACME{Domains: []string{},
			DirectoryURL: DefaultACMEDirectoryURL, RenewBefore: Duration(DefaultACMERenewBefore)}},
		Prefix:                  DefaultPrefix,
		TrustedProxies:          []string{},
		ClientIPHeader:          DefaultClientIPHeader,
		PathParameters:          DefaultPathParameters,
		MaxHeaderBytes:          DefaultMaxHeaderBytes,
		MaxBodyBytes:            DefaultServeMaxBodyBytes,
		ReadTimeout:             Duration(DefaultServeReadTimeout),
		WriteTimeout:            Duration(DefaultServeWriteTimeout),
		IdleTimeout:             Duration(DefaultIdleTimeout),
		HeaderTimeout:           Duration(DefaultHeaderTimeout),
		BodyTimeout:             Duration(DefaultBodyTimeout),
		BodyMinRate:             DefaultBodyMinRate,
		MaxConnections:          DefaultMaxConnections,
		MaxConnectionsPerClient: DefaultMaxConnectionsPerClient,
		MaxInFlight:             DefaultServeMaxInFlight,
		Reserved:                ReservedShares{Admitted: DefaultReservedAdmitted, API: DefaultReservedAPI},
		ShutdownGrace:           Duration(DefaultShutdownGrace),
		Inventory:               InventoryClient{Refresh: Duration(DefaultInventoryRefresh)},
		PassCacheSize:           DefaultPassCacheSize,
		Binding:                 DefaultBinding(),
		ProxyProtocolTimeout:    Duration(DefaultProxyProtocolTimeout),
		Keys: Keys{
			Signing: Key{ID: DefaultKeyID, Algorithm: DefaultKeyAlgorithm},
			Verify:  []Key{},
		},
		Cookies: Cookies{
			Ticket:   DefaultTicketCookie,
			Pass:     DefaultPassCookie,
			Secure:   DefaultCookieSecure,
			SameSite: DefaultSameSite,
		},
		Bypass: Bypass{CIDRs: []string{}, Header: DefaultBypassHeader},
		RateLimits: RateLimits{
			PerIP:      Bucket{Rate: DefaultPerIPRate, Burst: DefaultPerIPBurst},
			PerPrefix:  Bucket{Rate: DefaultPerPrefixRate, Burst: DefaultPerPrefixBurst},
			IPv4Prefix: DefaultIPv4Prefix,
			IPv6Prefix: DefaultIPv6Prefix,
			TableSize:  DefaultRateLimitsTable,
			WrongInvites: WrongInvites{
				PerIP:     Bucket{Rate: DefaultWrongInvitesPerIPRate, Burst: DefaultWrongInvitesPerIPBurst},
				PerPrefix: Bucket{Rate: DefaultWrongInvitesPerPrefixRate, Burst: DefaultWrongInvitesPerPrefixBurst},
			},
		},
	}
}

func defaultAdmission() Admission {
	return Admission{
		Store:           DefaultAdmissionStore,
		DataDir:         DefaultAdmissionDataDir,
		Redis:           defaultRedis(),
		RedisPrefix:     DefaultAdmissionRedisPrefix,
		Lease:           DefaultAdmissionLease,
		ReportRetention: DefaultReportRetention,
	}
}
