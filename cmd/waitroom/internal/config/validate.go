package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/secretcheck"
)

// Role is a part of waitroom that a process runs from a configuration.
// Roles combine with |.
type Role uint8

// Roles.
const (
	// RoleSidecar is the seat-hold sidecar: waitroom inventory, or
	// waitroom serve with serve.with_inventory.
	RoleSidecar Role = 1 << iota
	// RoleProxy is the waiting-room proxy: waitroom serve and waitroom
	// demo.
	RoleProxy
)

// Roles returns the roles c configures, the ones Validate checks for:
//   - RoleProxy when any of serve, admin, admission, origins, routes or
//     events differs from Default;
//   - RoleSidecar when inventory differs from Default, when
//     serve.with_inventory is set, or when c configures no proxy (a file
//     for waitroom inventory, or one that sets only log).
//
// So a file that configures only the proxy is valid without an inventory
// section, and an inventory-only file is valid without origins.
func (c *Config) Roles() Role {
	d := Default()
	var r Role
	if len(c.Origins) > 0 || len(c.Routes) > 0 || len(c.Events) > 0 ||
		!reflect.DeepEqual(c.Serve, d.Serve) || !reflect.DeepEqual(c.Admin, d.Admin) ||
		!reflect.DeepEqual(c.Admission, d.Admission) {
		r |= RoleProxy
	}
	if r == 0 || c.Serve.WithInventory || !reflect.DeepEqual(c.Inventory, d.Inventory) {
		r |= RoleSidecar
	}
	return r
}

// Validate checks c for the roles it configures (see Config.Roles): what
// waitroom check-config does. It returns every problem it finds, each an
// *Error with its key path ("events[2].caps.max_active: must be 0 or
// more"), joined with errors.Join; nil when c is valid. It never changes
// c, reads no file, and never puts a secret (token, password, key) in a
// message.
func Validate(c *Config) error {
	if c == nil {
		return &Error{Msg: "no configuration (nil)"}
	}
	return ValidateFor(c, c.Roles())
}

// ValidateFor checks c for a process that runs roles: waitroom inventory
// calls it with RoleSidecar, waitroom serve and waitroom demo with
// RoleProxy (RoleProxy with serve.with_inventory also checks the sidecar,
// which then runs in the same process).
//
// Every value that is given is checked whatever the roles (a bad address
// is wrong before it is used); what a role needs is required only when
// the role runs: the sidecar's api_token; the proxy's origins, listener,
// signing key and admin token. Like Validate, it is pure and reports
// every problem.
func ValidateFor(c *Config, roles Role) error {
	if c == nil {
		return &Error{Msg: "no configuration (nil)"}
	}
	if roles&RoleProxy != 0 && c.Serve.WithInventory {
		roles |= RoleSidecar
	}
	v := validator{roles: roles}
	v.log("log", c.Log)
	v.inventory("inventory", &c.Inventory)
	v.serve("serve", &c.Serve)
	v.admin("admin", &c.Admin)
	v.listeners(c)
	v.admission("admission", &c.Admission, c)
	v.origins("origins", c.Origins)
	v.routes("routes", c)
	v.events("events", c)
	v.defence("bot_defence", &c.BotDefence, c)
	v.identity("identity", &c.Identity, c)
	return errors.Join(v.errs...)
}

// validator collects problems. Each section has a method taking the
// section's path, so a section inside a list checks the same way:
// v.inventory(fmt.Sprintf("events[%d].inventory", i), ...).
type validator struct {
	roles Role
	errs  []error
}

func (v *validator) fail(path, format string, args ...any) {
	e := errorf(0, path, format, args...)
	e.Msg = suggestChoice(e.Msg)
	v.errs = append(v.errs, e)
}

// choiceMsg matches the messages of a value outside a fixed set:
// must be a, b or c (got "x").
var choiceMsg = regexp.MustCompile(`^must be ((?:[A-Za-z0-9_]+, )*[A-Za-z0-9_]+ or [A-Za-z0-9_]+) \(got "([^"]*)"\)$`)

// suggestChoice adds "did you mean b?" to such a message when the value
// is a near miss of one of the choices.
func suggestChoice(msg string) string {
	m := choiceMsg.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	list := strings.ReplaceAll(m[1], " or ", ", ")
	if s := closest(m[2], strings.Split(list, ", ")); s != "" {
		return msg + "; did you mean " + s + "?"
	}
	return msg
}

// closest returns the name in names nearest to got by edit distance,
// ignoring ASCII case, when it is a near miss (at most 2 edits, and fewer
// than the name's length); "" otherwise.
func closest(got string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		d := editDistance(strings.ToLower(got), strings.ToLower(n))
		if d < bestD && d < len(n) && d > 0 {
			best, bestD = n, d
		}
	}
	return best
}

func (v *validator) runs(r Role) bool { return v.roles&r != 0 }

func (v *validator) log(path string, l Log) {
	switch l.Level {
	case LevelDebug, LevelInfo, LevelWarn, LevelError:
	default:
		v.fail(path+".level", "must be debug, info, warn or error (got %q)", l.Level)
	}
	switch l.Format {
	case FormatText, FormatJSON:
	default:
		v.fail(path+".format", "must be text or json (got %q)", l.Format)
	}
}

func (v *validator) inventory(path string, inv *Inventory) {
	v.listenAddr(path+".listen", inv.Listen)

	token := path + ".api_token"
	switch t := inv.APIToken; {
	case t == "" && !inv.InsecureNoAuth:
		if v.runs(RoleSidecar) {
			v.fail(token, "set %s (e.g. from ${WAITROOM_INVENTORY_TOKEN}) or insecure_no_auth: true", token)
		}
	case t == "":
	case inv.InsecureNoAuth:
		v.fail(path+".insecure_no_auth", "is true while api_token is set: remove one of them")
	default:
		v.headerToken(token, t, MinAPITokenLength)
	}

	v.inventoryStore(path, inv)
	v.redis(path+".redis", &inv.Redis)

	v.positive(path+".reaper.interval", inv.Reaper.Interval)
	if b := inv.Reaper.Batch; b < 1 || b > MaxReapBatch {
		v.fail(path+".reaper.batch", "must be between 1 and %d (got %d)", MaxReapBatch, b)
	}
	if d := inv.IdempotencyTTL; d < Duration(MinIdempotencyTTL) {
		v.fail(path+".idempotency_ttl", "must be at least %s, so that a client's retries the next day still find their key (got %s)", Duration(MinIdempotencyTTL), d)
	}
	v.positive(path+".hold_retention", inv.HoldRetention)
	if n := inv.MaxBodyBytes; n < MinMaxBodyBytes || n > MaxMaxBodyBytes {
		v.fail(path+".max_body_bytes", "must be between %d (1 KiB) and %d (256 MiB) (got %d)", MinMaxBodyBytes, MaxMaxBodyBytes, n)
	}
}

// redis checks every Redis setting that is given, whichever store is
// chosen: a bad URL is wrong even before it is used.
func (v *validator) redis(path string, r *Redis) {
	sentinel := r.Sentinel.Master != "" || len(r.Sentinel.Addresses) > 0
	switch {
	case r.URL != "" && len(r.Cluster) > 0:
		v.fail(path, "set url or cluster, not both")
	case sentinel && (r.URL != "" || len(r.Cluster) > 0):
		v.fail(path, "set one of url, cluster and sentinel")
	}
	if r.URL != "" {
		v.redisURL(path+".url", r)
	}
	v.addrs(path+".cluster", r.Cluster)
	if sentinel {
		if r.Sentinel.Master == "" {
			v.fail(path+".sentinel.master", "must name the master the Sentinels monitor, such as mymaster")
		}
		if len(r.Sentinel.Addresses) == 0 {
			v.fail(path+".sentinel.addresses", "must list at least one Sentinel, host:port")
		}
		v.addrs(path+".sentinel.addresses", r.Sentinel.Addresses)
	}
	if r.PoolSize < 0 {
		v.fail(path+".pool_size", "must be 0 (the client's default) or more (got %d)", r.PoolSize)
	}
	if n := r.MinReplicasAcked; n < 0 || n > MaxMinReplicasAcked {
		v.fail(path+".min_replicas_acked", "must be between 0 (no WAIT) and %d (got %d)", MaxMinReplicasAcked, n)
	}
	if r.MinReplicasAcked > 0 {
		v.positive(path+".ack_timeout", r.AckTimeout)
	}
}

// addrs checks a list of Redis addresses: host:port each, none twice.
func (v *validator) addrs(path string, list []string) {
	seen := make(map[string]int, len(list))
	for i, addr := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		if err := hostPort(addr, false); err != nil {
			v.fail(p, "must be host:port, such as 10.0.0.5:6379 (%v)", err)
			continue
		}
		if j, dup := seen[addr]; dup {
			v.fail(p, "repeats %s[%d]", path[strings.LastIndex(path, ".")+1:], j)
			continue
		}
		seen[addr] = i
	}
}

func (v *validator) redisURL(path string, r *Redis) {
	const want = "must be a redis:// or rediss:// URL"
	// url.Parse's errors quote the whole URL, password and all: never
	// show them.
	u, err := url.Parse(r.URL)
	if err != nil {
		v.fail(path, "%s (it does not parse as a URL)", want)
		return
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		v.fail(path, "%s (got scheme %q)", want, u.Scheme)
		return
	}
	// go-redis's own errors name the offending part, never the password.
	opts, err := redis.ParseURL(r.URL)
	if err != nil {
		v.fail(path, "%s: %v", want, err)
		return
	}
	if u.Host == "" {
		v.fail(path, "%s with a host, such as redis://127.0.0.1:6379/0", want)
	}
	if opts.Password != "" && r.Password != "" {
		v.fail(strings.TrimSuffix(path, ".url")+".password", "is set and url has a password too: keep one")
	}
	if opts.Username != "" && r.Username != "" {
		v.fail(strings.TrimSuffix(path, ".url")+".username", "is set and url has a user name too: keep one")
	}
}

// headerToken checks a bearer token or header secret t of at least min
// characters and not obviously guessable (secretcheck.Weak), never
// quoting it.
func (v *validator) headerToken(path, t string, min int) {
	switch {
	case strings.TrimFunc(t, unicode.IsSpace) != t:
		v.fail(path, "starts or ends with white space (a trailing newline from a secrets file?)")
	case strings.IndexFunc(t, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0:
		v.fail(path, "must be printable ASCII without spaces: it travels in an HTTP header")
	case len(t) < min:
		v.fail(path, "must be at least %d characters (got %d); openssl rand -hex 32 makes a good one", min, len(t))
	default:
		if why := secretcheck.Weak(t, min); why != "" {
			v.fail(path, "%s: anyone could guess it; %s", why, secretcheck.Hint)
		}
	}
}

// secret checks an inline signing (HMAC) secret s: at least min bytes and
// not obviously guessable (secretcheck.Weak), never quoting it.
func (v *validator) secret(path, s string, min int) {
	switch {
	case strings.TrimFunc(s, unicode.IsSpace) != s:
		v.fail(path, "starts or ends with white space (a trailing newline from a secrets file?)")
	case len(s) < min:
		v.fail(path, "must be at least %d bytes (got %d); openssl rand -hex 32 makes a good one", min, len(s))
	default:
		if why := secretcheck.Weak(s, min); why != "" {
			v.fail(path, "%s: it signs tokens, so it must not be guessable; %s", why, secretcheck.Hint)
		}
	}
}

func (v *validator) listenAddr(path, addr string) {
	if err := hostPort(addr, true); err != nil {
		v.fail(path, "must be host:port, such as 127.0.0.1:8082 (%v)", err)
	}
}

func (v *validator) positive(path string, d Duration) {
	if d <= 0 {
		v.fail(path, "must be more than 0, such as %s (got %s)", Duration(time.Second), d)
	}
}

func (v *validator) nonNegative(path string, d Duration) {
	if d < 0 {
		v.fail(path, "must be 0 or more (got %s)", d)
	}
}

// atLeast checks an integer n >= min.
func (v *validator) atLeast(path string, n int64, min int64) {
	if n < min {
		v.fail(path, "must be %d or more (got %d)", min, n)
	}
}

// between checks an integer lo <= n <= hi.
func (v *validator) between(path string, n, lo, hi int64) {
	if n < lo || n > hi {
		v.fail(path, "must be between %d and %d (got %d)", lo, hi, n)
	}
}

// fraction checks 0 < f < 1.
func (v *validator) fraction(path string, f float64) {
	if !(f > 0 && f < 1) {
		v.fail(path, "must be between 0 and 1, exclusive (got %s)", fmtFloat(f))
	}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// hostPort checks a host:port address with a numeric port. A listen
// address may leave the host out (all interfaces) and use port 0 (any
// free port); a remote address may not.
func hostPort(addr string, listen bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("got %q", addr)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	if !listen {
		if host == "" {
			return fmt.Errorf("the host is missing in %q", addr)
		}
		if n == 0 {
			return errors.New("port 0")
		}
	}
	return nil
}

// sortedKeys returns m's keys in order, so that messages come in a stable
// order.
func sortedKeys[K ~string, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}
