package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/waitroom/waitroom/internal/ascii"
	"github.com/waitroom/waitroom/proxy/target"
)

func (v *validator) serve(path string, s *Serve) {
	proxy := v.runs(RoleProxy)
	if s.Listen != "" {
		v.listenAddr(path+".listen", s.Listen)
	} else if proxy && s.TLS.Listen == "" {
		v.fail(path+".listen", "is empty and so is tls.listen: the proxy needs a listener (such as 127.0.0.1:8080)")
	}
	v.serveTLS(path+".tls", &s.TLS)
	if s.PublicURL != "" {
		v.publicURL(path+".public_url", s.PublicURL)
	}
	v.prefix(path+".prefix", s.Prefix)
	v.networks(path+".trusted_proxies", s.TrustedProxies)
	v.headerName(path+".client_ip_header", s.ClientIPHeader)
	switch s.PathParameters {
	case PathParametersRefuse, PathParametersStrip:
	default:
		v.fail(path+".path_parameters", "must be refuse or strip (got %q)", s.PathParameters)
	}
	if s.DefaultHost != "" && !target.ValidHost([]byte(s.DefaultHost)) {
		v.fail(path+".default_host", "must be a host[:port] such as shop.example (got %q)", s.DefaultHost)
	}
	if notClientIPHeader(s.ClientIPHeader) || strings.EqualFold(s.ClientIPHeader, s.Bypass.Header) {
		v.fail(path+".client_ip_header", "cannot be %s: waitroom sets, removes or routes on that header; use X-Forwarded-For, Forwarded, X-Real-IP, CF-Connecting-IP or another header that holds one client address", s.ClientIPHeader)
	}
	if s.ProxyProtocol && len(s.TrustedProxies) == 0 {
		v.fail(path+".proxy_protocol", "needs trusted_proxies: only the balancers listed there may send a PROXY header, and every other connection is refused")
	}
	v.positive(path+".proxy_protocol_timeout", s.ProxyProtocolTimeout)
	if n := s.MaxHeaderBytes; n < MinMaxHeaderBytes || n > MaxMaxHeaderBytes {
		v.fail(path+".max_header_bytes", "must be between %d (16 KiB, for real-world cookies) and %d (1 MiB) (got %d)", MinMaxHeaderBytes, MaxMaxHeaderBytes, n)
	}
	if s.MaxBodyBytes < 0 {
		v.fail(path+".max_body_bytes", "must be 0 (no limit) or more (got %d)", s.MaxBodyBytes)
	}
	v.positive(path+".read_timeout", s.ReadTimeout)
	v.nonNegative(path+".write_timeout", s.WriteTimeout)
	v.positive(path+".idle_timeout", s.IdleTimeout)
	v.positive(path+".header_timeout", s.HeaderTimeout)
	v.positive(path+".body_timeout", s.BodyTimeout)
	if s.BodyTimeout > s.ReadTimeout && s.ReadTimeout > 0 {
		v.fail(path+".body_timeout", "must not exceed read_timeout (%s), which bounds the whole body (got %s)", s.ReadTimeout, s.BodyTimeout)
	}
	if s.BodyMinRate < 0 {
		v.fail(path+".body_min_rate", "must be 0 (no minimum) or more bytes a second (got %d)", s.BodyMinRate)
	}
	v.atLeast(path+".max_connections", int64(s.MaxConnections), 0)
	v.atLeast(path+".max_connections_per_client", int64(s.MaxConnectionsPerClient), 0)
	if s.MaxConnections > 0 && s.MaxConnectionsPerClient > s.MaxConnections {
		v.fail(path+".max_connections_per_client", "must not exceed max_connections (%d) (got %d)", s.MaxConnections, s.MaxConnectionsPerClient)
	}
	v.atLeast(path+".max_in_flight", int64(s.MaxInFlight), 0)
	r := s.Reserved
	for _, f := range []struct {
		key string
		v   float64
	}{{"admitted", r.Admitted}, {"api", r.API}} {
		if !(f.v >= 0 && f.v < 1) {
			v.fail(path+".reserved."+f.key, "must be a share from 0 to less than 1 (got %s)", fmtFloat(f.v))
		}
	}
	if r.Admitted >= 0 && r.API >= 0 && r.Admitted+r.API >= 1 {
		v.fail(path+".reserved", "admitted + api must be less than 1, so that some capacity is shared (got %s)", fmtFloat(r.Admitted+r.API))
	}
	v.nonNegative(path+".shutdown_grace", s.ShutdownGrace)
	v.inventoryClient(path+".inventory", &s.Inventory, s.WithInventory)
	v.atLeast(path+".pass_cache_size", int64(s.PassCacheSize), 1)
	seen := make(map[BindingSignal]int, len(s.Binding))
	for i, b := range s.Binding {
		p := fmt.Sprintf("%s.binding[%d]", path, i)
		switch b {
		case BindUserAgent, BindIPPrefix, BindTLSStack: // tls_stack's needs: see defence
		default:
			v.fail(p, "must be user_agent, ip_prefix or tls_stack (got %q)", b)
			continue
		}
		if j, dup := seen[b]; dup {
			v.fail(p, "repeats binding[%d]", j)
			continue
		}
		seen[b] = i
	}
	v.keys(path+".keys", &s.Keys)
	v.cookies(path+".cookies", &s.Cookies)
	v.bypass(path+".bypass", &s.Bypass)
	v.crawlers(path+".crawlers", s.Crawlers)
	v.rateLimits(path+".rate_limits", &s.RateLimits)
}

func (v *validator) serveTLS(path string, t *ServeTLS) {
	v.acme(path, t)
	if t.Listen != "" {
		v.listenAddr(path+".listen", t.Listen)
		// With acme.domains, acme checks the certificate files against it.
		if t.CertFile == "" && !t.ACME.Enabled() {
			v.fail(path+".cert_file", "must be set with tls.listen (a PEM certificate chain), or acme.domains")
		}
		if t.KeyFile == "" && !t.ACME.Enabled() {
			v.fail(path+".key_file", "must be set with tls.listen (the certificate's PEM private key), or acme.domains")
		}
	} else if t.CertFile != "" || t.KeyFile != "" {
		v.fail(path+".listen", "is empty while cert_file or key_file is set: set it (such as :443) or remove them")
	}
	switch t.MinVersion {
	case TLS12, TLS13:
	default:
		v.fail(path+".min_version", `must be "1.2" or "1.3" (got %q)`, t.MinVersion)
	}
}

// publicURL checks serve.public_url: an http or https URL of a host, with
// no path, query, fragment or credentials.
func (v *validator) publicURL(path, raw string) {
	const want = "must be the URL visitors use, scheme and host only, such as https://tickets.example.com"
	// url.Parse's errors quote the whole URL: never show them.
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		v.fail(path, "%s (it does not parse as a URL)", want)
	case u.Scheme != "http" && u.Scheme != "https":
		v.fail(path, "%s (got scheme %q)", want, u.Scheme)
	case u.User != nil:
		v.fail(path, "%s, without credentials", want)
	case u.Host == "" || u.Opaque != "":
		v.fail(path, "%s (the host is missing)", want)
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		v.fail(path, "%s, without a path, query or fragment", want)
	}
}

// prefix checks serve.prefix: an absolute path of plain segments, without
// a trailing slash.
func (v *validator) prefix(path, p string) {
	const want = `must be a path such as /_wr: starting with "/", not ending with one, made of letters, digits and -._~`
	if p == "" || p == "/" || p[0] != '/' || strings.HasSuffix(p, "/") {
		v.fail(path, "%s (got %q)", want, p)
		return
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." || strings.IndexFunc(seg, func(r rune) bool { return !isUnreserved(r) }) >= 0 {
			v.fail(path, "%s (got %q)", want, p)
			return
		}
	}
}

func isUnreserved(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-._~", r)
}

// networks checks a list of CIDRs or bare IP addresses.
func (v *validator) networks(path string, list []string) {
	seen := make(map[netip.Prefix]int, len(list))
	for i, s := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		pfx, err := ParseNetwork(s)
		if err != nil {
			v.fail(p, "must be a CIDR such as 10.0.0.0/8 or an IP address such as 192.0.2.7 (got %q)", s)
			continue
		}
		if pfx != pfx.Masked() {
			v.fail(p, "has bits set after the /%d: did you mean %s?", pfx.Bits(), pfx.Masked())
			continue
		}
		if j, dup := seen[pfx]; dup {
			v.fail(p, "repeats [%d]", j)
			continue
		}
		seen[pfx] = i
	}
}

// notClientIPHeader reports whether name is a header that cannot carry
// the client address: hop-by-hop and framing headers, the ones waitroom
// sets for the origin (the proxy writes the client address into the
// configured one) and the ones it routes or decides on.
func notClientIPHeader(name string) bool {
	if ascii.HasPrefixFold(name, "X-Waitroom-") || ascii.HasPrefixFold(name, "Proxy-") {
		return true
	}
	switch strings.ToLower(name) {
	case "host", "cookie", "connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade",
		"content-length", "content-type", "expect", "user-agent", "authorization",
		"x-forwarded-proto", "x-forwarded-host", "x-original-uri", "x-original-url", "x-rewrite-url":
		return true
	}
	return false
}

// headerName checks an HTTP header field name (an RFC 9110 token).
func (v *validator) headerName(path, name string) {
	if !isToken(name) {
		v.fail(path, "must be an HTTP header name such as X-Forwarded-For (got %q)", name)
	}
}

// isToken reports whether s is a non-empty RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c > '~' || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

func (v *validator) inventoryClient(path string, ic *InventoryClient, withInventory bool) {
	if ic.URL != "" {
		const want = "must be the sidecar's base URL, such as http://10.0.0.7:8082"
		// url.Parse's errors quote the whole URL: never show them.
		u, err := url.Parse(ic.URL)
		switch {
		case err != nil:
			v.fail(path+".url", "%s (it does not parse as a URL)", want)
		case u.Scheme != "http" && u.Scheme != "https":
			v.fail(path+".url", "%s (got scheme %q)", want, u.Scheme)
		case u.User != nil:
			v.fail(path+".url", "must not carry credentials: put the bearer token in token")
		case u.Host == "" || u.Opaque != "":
			v.fail(path+".url", "%s (the host is missing)", want)
		case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
			v.fail(path+".url", "%s, without a query or fragment", want)
		}
		if withInventory {
			v.fail(path+".url", "is set while with_inventory is true: leave it empty to use the sidecar in this process, or set with_inventory: false to use the one at url")
		}
	}
	if ic.Token != "" {
		if ic.URL == "" {
			v.fail(path+".token", "is set while url is empty: the token is only sent to the sidecar at url")
		} else {
			v.headerToken(path+".token", ic.Token, MinAPITokenLength)
		}
	}
	v.positive(path+".refresh", ic.Refresh)
}

func (v *validator) keys(path string, k *Keys) {
	v.key(path+".signing", &k.Signing, true)
	ids := map[string]string{k.Signing.ID: "signing"}
	for i := range k.Verify {
		p := fmt.Sprintf("%s.verify[%d]", path, i)
		v.key(p, &k.Verify[i], false)
		id := k.Verify[i].ID
		if other, dup := ids[id]; dup && id != "" {
			v.fail(p+".id", "repeats the id of %s: every key needs its own id", other)
			continue
		}
		ids[id] = fmt.Sprintf("verify[%d]", i)
	}
}

// key checks one token key; signing says whether it is the signing key,
// which only the proxy requires key material for.
func (v *validator) key(path string, k *Key, signing bool) {
	required := !signing || v.runs(RoleProxy)
	if !validKeyID(k.ID) {
		v.fail(path+".id", "must be 1 to %d characters from [A-Za-z0-9._-] (got %q)", MaxKeyIDLength, k.ID)
	}
	switch k.Algorithm {
	case AlgHS256:
		if k.PrivateKeyFile != "" {
			v.fail(path+".private_key_file", "is for EdDSA keys; an HS256 key has secret or secret_file")
		}
		if k.PublicKeyFile != "" {
			v.fail(path+".public_key_file", "is for EdDSA keys; an HS256 key has secret or secret_file")
		}
		switch {
		case k.Secret != "" && k.SecretFile != "":
			v.fail(path, "set secret or secret_file, not both")
		case k.Secret != "":
			v.secret(path+".secret", k.Secret, MinSecretLength)
		case k.SecretFile == "" && required:
			v.fail(path+".secret", "set secret (from the environment, such as ${WAITROOM_SIGNING_SECRET}) or secret_file: an HS256 key needs at least %d bytes of secret", MinSecretLength)
		}
	case AlgEdDSA:
		if k.Secret != "" {
			v.fail(path+".secret", "is for HS256 keys; an EdDSA key has key files")
		}
		if k.SecretFile != "" {
			v.fail(path+".secret_file", "is for HS256 keys; an EdDSA key has key files")
		}
		switch {
		case signing && k.PublicKeyFile != "":
			v.fail(path+".public_key_file", "is for verification keys: the signing key's public key comes from its private_key_file")
		case signing && k.PrivateKeyFile == "" && required:
			v.fail(path+".private_key_file", "must be set: the signing key needs an Ed25519 private key (waitroom keygen makes one)")
		case !signing && k.PrivateKeyFile != "" && k.PublicKeyFile != "":
			v.fail(path, "set public_key_file or private_key_file, not both")
		case !signing && k.PrivateKeyFile == "" && k.PublicKeyFile == "":
			v.fail(path+".public_key_file", "must be set (or private_key_file): a verification key needs the Ed25519 public key")
		}
	default:
		v.fail(path+".algorithm", "must be HS256 or EdDSA (got %q)", k.Algorithm)
	}
}

func validKeyID(id string) bool {
	if id == "" || len(id) > MaxKeyIDLength {
		return false
	}
	for _, r := range id {
		if !isUnreserved(r) || r == '~' {
			return false
		}
	}
	return true
}

func (v *validator) cookies(path string, c *Cookies) {
	for _, f := range []struct{ key, name string }{{"ticket", c.Ticket}, {"pass", c.Pass}} {
		p := path + "." + f.key
		if !isToken(f.name) {
			v.fail(p, "must be a cookie name: letters, digits and !#$%%&'*+-.^_`|~ (got %q)", f.name)
			continue
		}
		if ascii.HasPrefixFold(f.name, "__Host-") && (c.Secure != SecureAlways || c.Domain != "") {
			v.fail(p, "starts with __Host-, which browsers accept only with secure: always and no domain")
		} else if ascii.HasPrefixFold(f.name, "__Secure-") && c.Secure != SecureAlways {
			v.fail(p, "starts with __Secure-, which browsers accept only with secure: always")
		}
	}
	if c.Ticket == c.Pass && c.Ticket != "" {
		v.fail(path+".pass", "must differ from ticket (both are %q)", c.Pass)
	}
	if c.Domain != "" && !validDomain(strings.TrimPrefix(c.Domain, ".")) {
		v.fail(path+".domain", "must be a domain name such as example.com (got %q)", c.Domain)
	}
	switch c.Secure {
	case SecureAuto, SecureAlways, SecureNever:
	default:
		v.fail(path+".secure", "must be auto, always or never (got %q)", c.Secure)
	}
	switch c.SameSite {
	case SameSiteLax, SameSiteStrict:
	default:
		v.fail(path+".same_site", "must be lax or strict (got %q)", c.SameSite)
	}
}

// validDomain checks a DNS name: dot-separated labels of letters, digits
// and inner hyphens.
func validDomain(d string) bool {
	if d == "" || len(d) > 253 {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

func (v *validator) bypass(path string, b *Bypass) {
	v.networks(path+".cidrs", b.CIDRs)
	v.headerName(path+".header", b.Header)
	if b.Secret != "" {
		v.headerToken(path+".secret", b.Secret, MinBypassSecretLength)
	}
}

func (v *validator) rateLimits(path string, r *RateLimits) {
	v.bucket(path+".per_ip", r.PerIP)
	v.bucket(path+".per_prefix", r.PerPrefix)
	v.between(path+".ipv4_prefix", int64(r.IPv4Prefix), 8, 32)
	v.between(path+".ipv6_prefix", int64(r.IPv6Prefix), 16, 128)
	v.atLeast(path+".table_size", int64(r.TableSize), 1)
	for _, b := range []struct {
		path string
		b    Bucket
	}{{path + ".wrong_invites.per_ip", r.WrongInvites.PerIP}, {path + ".wrong_invites.per_prefix", r.WrongInvites.PerPrefix}} {
		v.bucket(b.path, b.b)
		if finite(b.b.Rate) && b.b.Rate < 0.001 {
			v.fail(b.path+".rate", "must be at least 0.001 codes per second: wrong invite codes are always limited (got %s)", fmtFloat(b.b.Rate))
		}
	}
}

func (v *validator) bucket(path string, b Bucket) {
	if !(b.Rate >= 0) || !finite(b.Rate) {
		v.fail(path+".rate", "must be 0 (no limit) or more requests per second (got %s)", fmtFloat(b.Rate))
		return
	}
	if b.Rate > 0 && b.Burst < 1 {
		v.fail(path+".burst", "must be 1 or more with a rate (got %d)", b.Burst)
	}
}

func (v *validator) admin(path string, a *Admin) {
	if a.Listen != "" {
		v.listenAddr(path+".listen", a.Listen)
	}
	v.atLeast(path+".max_connections", int64(a.MaxConnections), 0)
	switch {
	case a.Token != "":
		v.headerToken(path+".token", a.Token, MinAdminTokenLength)
	case a.Listen != "" && v.runs(RoleProxy):
		v.fail(path+".token", `set admin.token (from the environment, such as ${WAITROOM_ADMIN_TOKEN}), or listen: "" to run without the operator API`)
	}
}

// listeners checks that the listeners one process opens do not collide.
func (v *validator) listeners(c *Config) {
	if !v.runs(RoleProxy) {
		return
	}
	type ln struct{ path, addr string }
	all := []ln{{"serve.listen", c.Serve.Listen}, {"serve.tls.listen", c.Serve.TLS.Listen}, {"admin.listen", c.Admin.Listen}}
	if v.runs(RoleSidecar) && c.Serve.WithInventory {
		all = append(all, ln{"inventory.listen", c.Inventory.Listen})
	}
	for i, a := range all {
		for _, b := range all[:i] {
			if sameListener(a.addr, b.addr) {
				v.fail(a.path, "uses the same address as %s (%s)", b.path, b.addr)
				break
			}
		}
	}
}

// sameListener reports whether two listen addresses would collide: the
// same port on the same host, or on all interfaces. Port 0 (any free
// port) never collides.
func sameListener(a, b string) bool {
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	if a == "" || b == "" || errA != nil || errB != nil || pa != pb || pa == "0" {
		return false
	}
	wild := func(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }
	return ha == hb || wild(ha) || wild(hb)
}

func (v *validator) admission(path string, a *Admission, c *Config) {
	// Two embedded stores in one process each lock a directory of their
	// own: one inside the other would mix their files.
	if v.admissionStore(path, a, c) && a.Store == StoreEmbedded && c.Serve.WithInventory &&
		c.Inventory.Store == StoreEmbedded && c.Inventory.DataDir != "" && within(c.Inventory.DataDir, a.DataDir) {
		v.fail(path+".data_dir", "is inventory.data_dir or contains it: give each store a directory of its own")
	}
	v.redis(path+".redis", &a.Redis)
	if c.Serve.RateLimits.Shared && a.Store != StoreRedis {
		v.fail("serve.rate_limits.shared", "needs admission.store: redis (the budget is kept in the admission store's Redis; an embedded store has one replica, whose buckets are the room's)")
	}
	switch p := a.RedisPrefix; {
	case p == "":
		v.fail(path+".redis_prefix", `must not be empty (the default is %q)`, DefaultAdmissionRedisPrefix)
	case strings.ContainsAny(p, "{}"):
		v.fail(path+".redis_prefix", "must not contain { or }: they would change the keys' Redis Cluster hash slot (got %q)", p)
	case strings.IndexFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		v.fail(path+".redis_prefix", "must not contain spaces or control characters (got %q)", p)
	}
	if r := a.Replica; len(r) > 128 || strings.IndexFunc(r, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
		v.fail(path+".replica", "must be at most 128 printable ASCII characters without spaces (got %q)", r)
	}
	if l := a.Lease.Std(); l < MinAdmissionLease || l > MaxAdmissionLease {
		v.fail(path+".lease", "must be from %v to %v, such as %v (got %v)", Duration(MinAdmissionLease), Duration(MaxAdmissionLease), DefaultAdmissionLease, a.Lease)
	}
	if r := a.ReportRetention.Std(); r != 0 && (r < MinReportRetention || r > MaxReportRetention) {
		v.fail(path+".report_retention", "must be from %v to %v, such as %v (got %v)", Duration(MinReportRetention), Duration(MaxReportRetention), DefaultReportRetention, a.ReportRetention)
	}
}

// within reports whether dir is parent or inside it, comparing cleaned
// paths as written (no file system access).
func within(dir, parent string) bool {
	dir, parent = filepath.Clean(dir), filepath.Clean(parent)
	rel, err := filepath.Rel(parent, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
