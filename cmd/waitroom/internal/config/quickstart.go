package config

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Quickstart is the configuration `waitroom serve --origin` runs with and
// `waitroom init` writes: one origin, a waiting room in threshold mode on
// the gated path prefixes, every other path passed straight through, the
// queues embedded under a data directory, the operator API on loopback.
// YAML renders it as commented configuration text, which goes through
// Parse and Validate like any file, so both commands mean the same
// configuration. A Quickstart is plain data.
type Quickstart struct {
	// Origin is the site's URL: http:// or https://, a host and an
	// optional port (80 or 443 by default), nothing else.
	Origin string
	// Gates are the path prefixes that get the waiting room, such as
	// /checkout/; at least one.
	Gates []string
	// Listen is where visitors connect, host:port; DefaultServeListen
	// when empty.
	Listen string
	// AdminListen is the operator API's address, on loopback;
	// DefaultAdminListen when empty.
	AdminListen string
	// DataDir holds the queues' journal (DataDir/admission);
	// DefaultQuickstartDataDir when empty.
	DataDir string
	// Name is the event's name on the waiting-room page; empty shows
	// QuickstartEvent.
	Name string
}

// Names in the quickstart configuration.
const (
	// DefaultQuickstartDataDir is the data directory of serve --origin.
	DefaultQuickstartDataDir = "./waitroom-data"
	// QuickstartEvent is the id of the quickstart's one event.
	QuickstartEvent = "site"
	// QuickstartOrigin is the name of the quickstart's one origin.
	QuickstartOrigin = "site"
	// EnvSigningSecret, EnvAdminToken and EnvChallengeSecret are the
	// environment variables the quickstart configuration takes its
	// secrets from.
	EnvSigningSecret   = "WAITROOM_SIGNING_SECRET"
	EnvAdminToken      = "WAITROOM_ADMIN_TOKEN"
	EnvChallengeSecret = "WAITROOM_CHALLENGE_SECRET"
	// MaxQuickstartGates bounds Quickstart.Gates.
	MaxQuickstartGates = 32
	// QuickstartMaxActive is the quickstart event's caps.max_active: the
	// visitors active at once beyond which threshold mode queues.
	QuickstartMaxActive = 500
)

// Check returns every problem with q's values, each an *Error whose Path
// names the command-line flag (--origin, --gate, ...), joined; nil when
// q can be rendered.
func (q *Quickstart) Check() error {
	var errs []error
	bad := func(flag, format string, args ...any) {
		errs = append(errs, &Error{Path: flag, Msg: fmt.Sprintf(format, args...)})
	}
	if addr, _, err := q.originAddr(); err != nil {
		bad("--origin", "%v", err)
	} else if listen := cmp.Or(q.Listen, DefaultServeListen); flagHostPort(listen, true) == nil && sameAddress(addr, listen) {
		bad("--origin", "%s is where waitroom itself listens (--listen %s): run the site on another port, or give waitroom another --listen", addr, listen)
	}
	if len(q.Gates) == 0 {
		bad("--gate", "give at least one path prefix to put behind the waiting room, such as --gate /checkout/")
	}
	if len(q.Gates) > MaxQuickstartGates {
		bad("--gate", "at most %d prefixes (got %d); write a configuration file for more (waitroom init)", MaxQuickstartGates, len(q.Gates))
	}
	seen := map[string]bool{}
	for _, g := range q.Gates {
		if err := gatePath(g); err != nil {
			bad("--gate", "%v", err)
			continue
		}
		if seen[strings.ToLower(g)] {
			bad("--gate", "%q is given twice", g)
		}
		seen[strings.ToLower(g)] = true
		if strings.HasPrefix(g+"/", DefaultPrefix+"/") {
			bad("--gate", "%q is inside %s, which waitroom keeps for its own pages", g, DefaultPrefix)
		}
	}
	if q.Listen != "" {
		if err := flagHostPort(q.Listen, true); err != nil {
			bad("--listen", "%v", err)
		}
	}
	if q.AdminListen != "" {
		if err := flagHostPort(q.AdminListen, false); err != nil {
			bad("--admin", "%v", err)
		} else if host, _, _ := net.SplitHostPort(q.AdminListen); !isLoopbackHost(host) {
			bad("--admin", "%q is not a loopback address: the operator API stays on this machine (127.0.0.1:PORT or [::1]:PORT)", q.AdminListen)
		}
	}
	if strings.ContainsAny(q.DataDir, "\x00\r\n") {
		bad("--data-dir", "has a control character")
	}
	if len(q.Name) > 200 || strings.ContainsFunc(q.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		bad("--name", "must be one line of at most 200 bytes")
	}
	return errors.Join(errs...)
}

// originAddr returns the origin's host:port and whether it is https.
func (q *Quickstart) originAddr() (addr string, tls bool, err error) {
	if q.Origin == "" {
		return "", false, errors.New("is required: the URL of your site, such as http://127.0.0.1:3000")
	}
	if l := strings.ToLower(q.Origin); !strings.HasPrefix(l, "http://") && !strings.HasPrefix(l, "https://") {
		return "", false, fmt.Errorf("%q must start with http:// or https://", q.Origin)
	}
	u, err := url.Parse(q.Origin)
	if err != nil {
		return "", false, fmt.Errorf("%q is not a URL such as http://127.0.0.1:3000", q.Origin)
	}
	switch u.Scheme {
	case "http":
	case "https":
		tls = true
	default:
		return "", false, fmt.Errorf("%q must start with http:// or https://", q.Origin)
	}
	switch {
	case u.Opaque != "" || u.Host == "":
		return "", false, fmt.Errorf("%q has no host: write it as http://HOST:PORT", q.Origin)
	case u.User != nil:
		return "", false, fmt.Errorf("%q carries a user name or password; an origin URL has none", q.Origin)
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.ForceQuery, u.Fragment != "":
		return "", false, fmt.Errorf("%q has a path, query or fragment; give only scheme, host and port (waitroom forwards every path as it is)", q.Origin)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		if strings.HasSuffix(u.Host, ":") {
			return "", false, fmt.Errorf("%q has an empty port", q.Origin)
		}
		port = "80"
		if tls {
			port = "443"
		}
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", false, fmt.Errorf("%q has no valid port (1 to 65535)", q.Origin)
	}
	if !validHost(host) {
		return "", false, fmt.Errorf("%q has no valid host name or IP address", q.Origin)
	}
	return net.JoinHostPort(host, port), tls, nil
}

// sameAddress reports whether a connection to origin (host:port) would
// reach the listener at listen (host:port, an empty host for every
// interface): the same port, and the same host, or a listener on every
// interface or on loopback with a loopback origin.
func sameAddress(origin, listen string) bool {
	oh, op, _ := net.SplitHostPort(origin)
	lh, lp, _ := net.SplitHostPort(listen)
	if op != lp {
		return false
	}
	oip, lip := net.ParseIP(oh), net.ParseIP(lh)
	switch {
	case lh == "" || lip != nil && lip.IsUnspecified():
		return true
	case strings.EqualFold(oh, lh):
		return true
	case oip != nil && lip != nil:
		return oip.Equal(lip) || oip.IsLoopback() && lip.IsLoopback()
	}
	return isLoopbackHost(oh) && isLoopbackHost(lh)
}

// validHost reports whether h is an IP address or a DNS name.
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// flagHostPort checks a listen address: host:port with a port from 0
// (any free port) to 65535 and a host that is an IP address, a name, or (when emptyHost)
// empty for every interface.
func flagHostPort(s string, emptyHost bool) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%q is not host:port, such as 127.0.0.1:8080 or :8080", s)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("%q has no valid port (0 for any free one, to 65535)", s)
	}
	if host == "" && !emptyHost || host != "" && !validHost(host) {
		return fmt.Errorf("%q has no valid host", s)
	}
	return nil
}

// gatePath checks a gated prefix: an absolute path of plain characters.
func gatePath(g string) error {
	if !strings.HasPrefix(g, "/") || strings.HasPrefix(g, "//") {
		return fmt.Errorf("%q must be a path starting with a single /, such as /checkout/", g)
	}
	if len(g) > 256 {
		return fmt.Errorf("%q is longer than 256 bytes", g)
	}
	for i := 0; i < len(g); i++ {
		c := g[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("/-._~!&'()*+,;=:@", c) >= 0
		if !ok {
			return fmt.Errorf("%q has %q: use a plain path such as /checkout/ (letters, digits, / and -._~)", g, c)
		}
	}
	for _, seg := range strings.Split(g, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("%q has a . or .. segment", g)
		}
	}
	return nil
}

// plainYAML matches the strings written as they are: paths, host:port
// and names that YAML reads as the same string, in block and flow
// context alike.
var plainYAML = regexp.MustCompile(`^[A-Za-z0-9/._~-][A-Za-z0-9/._~:@-]*$`)

// yamlString writes s as a YAML scalar whose value, after Parse's
// variable expansion, is s: plain when that is unambiguous, else
// double-quoted with every "$" doubled.
func yamlString(s string) string {
	if plainYAML.MatchString(s) && !strings.HasSuffix(s, ":") {
		switch strings.ToLower(s) {
		case "true", "false", "yes", "no", "on", "off", "null", "~", "now":
		default:
			if _, err := strconv.ParseFloat(s, 64); err != nil {
				return s
			}
		}
	}
	b, _ := json.Marshal(strings.ReplaceAll(s, "$", "$$"))
	return string(b)
}

// YAML renders q as a commented configuration file whose secrets are
// ${WAITROOM_SIGNING_SECRET}, ${WAITROOM_ADMIN_TOKEN} and
// ${WAITROOM_CHALLENGE_SECRET} references. It
// returns Check's problems when q is not valid. cmd is the command line
// that made it, for the file's first comment.
func (q *Quickstart) YAML(cmd string) ([]byte, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	addr, tls, _ := q.originAddr()
	listen := cmp.Or(q.Listen, DefaultServeListen)
	admin := cmp.Or(q.AdminListen, DefaultAdminListen)
	dataDir := strings.TrimRight(cmp.Or(q.DataDir, DefaultQuickstartDataDir), "/")
	if dataDir == "" {
		dataDir = "/"
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# waitroom in front of %s.", q.Origin)
	w("# %s: a waiting room that opens only while the site is busy", strings.Join(q.Gates, ", "))
	w("# (mode: threshold); every other path passes straight through.")
	w("# Made by: %s", strings.ReplaceAll(cmd, "\n", " "))
	w("#")
	w("# Secrets come from the environment, never from this file. Make them once")
	w("# and keep them (passes survive a restart only with the same signing key):")
	w("#   export %s=\"$(openssl rand -hex 32)\"", EnvSigningSecret)
	w("#   export %s=\"$(openssl rand -hex 32)\"", EnvAdminToken)
	w("#   export %s=\"$(openssl rand -hex 32)\"", EnvChallengeSecret)
	w("#   waitroom check-config -c FILE && waitroom serve -c FILE")
	w("# docs/configuration.md lists every key; configs/single-node.yaml shows more.")
	w("")
	w("serve:")
	w("  listen: %s  # where visitors connect; :80 for every interface", yamlString(listen))
	w("  keys:")
	w("    signing:                    # signs queue tickets and passes (HS256)")
	w("      secret: ${%s}", EnvSigningSecret)
	w("")
	w("admin:                          # operator API, /metrics, /healthz: keep it private")
	w("  listen: %s", yamlString(admin))
	w("  token: ${%s}  # sent as Authorization: Bearer TOKEN", EnvAdminToken)
	w("")
	w("bot_defence:                    # proof of work to join, once the room queues")
	w("  secret: ${%s}", EnvChallengeSecret)
	w("")
	w("admission:")
	w("  data_dir: %s  # the queues, journaled to disk", yamlString(dataDir+"/admission"))
	w("")
	w("origins:")
	w("  - name: %s", QuickstartOrigin)
	w("    addresses: [%s]", yamlString(addr))
	if tls {
		w("    tls: true                   # the certificate is verified")
	}
	w("    # health_check: {path: /healthz}  # default: a TCP connect; with a path,")
	w("    #                                 # any answer below 500 is up")
	w("")
	w("routes:                         # first match wins; other paths pass to the site")
	for _, g := range q.Gates {
		w("  - prefix: %s", yamlString(g))
		w("    event: %s", QuickstartEvent)
	}
	w("")
	w("events:")
	w("  - id: %s", QuickstartEvent)
	if q.Name != "" {
		w("    name: %s", yamlString(q.Name))
	}
	w("    mode: threshold             # queue only while the site is slow, failing or full")
	w("    landing_path: %s", yamlString(q.Gates[0]))
	w("    caps: {max_active: %d}     # the most visitors shopping at once", QuickstartMaxActive)
	w("    challenge: on               # joins pay proof of work; straight-through visitors do not")
	return []byte(b.String()), nil
}
