// Tests of the origins' and routes' validation (validate_sites.go).

package config

import (
	"strings"
	"testing"
	"time"
)

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
			o.HealthCheck.Disabled = true
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
			`origins[0].health_check.path: must be a path such as /healthz, or empty for a TCP connect check ("//evil" starts with //, which browsers read as another host)`,
			"origins[0].health_check.timeout: must be less than interval (1s) (got 1s)",
			"origins[0].health_check.unhealthy_after: must be 1 or more (got 0)",
			"origins[0].health_check.healthy_after: must be 1 or more (got 0)"}},
		{"tcp health check", func(c *Config) {
			// No path: a TCP connect, whose timing is still checked.
			c.Origins[0].HealthCheck = HealthCheck{Interval: Duration(time.Second), Timeout: Duration(2 * time.Second), UnhealthyAfter: 1, HealthyAfter: 1}
		}, []string{"origins[0].health_check.timeout: must be less than interval (1s) (got 2s)"}},

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
