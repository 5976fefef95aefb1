package config

import (
	"strings"
	"testing"
	"time"
)

// TestParseListDefaults checks that every list element starts from its
// defaults, and that what the file sets wins.
func TestParseListDefaults(t *testing.T) {
	t.Parallel()
	const in = `
serve:
  keys:
    signing: {secret: "${SECRET}"}
    verify:
      - {id: old, secret_file: /run/secrets/old}
      - {id: ed, algorithm: EdDSA, public_key_file: ed.pub}
origins:
  - name: shop
    addresses: [127.0.0.1:9000]
  - name: api
    addresses: [127.0.0.1:9001]
    retries: 0
    health_check: {path: "", interval: 1s}
events:
  - id: summer
    on_sale_at: 2027-03-01T10:00:00Z
  - id: winter
    on_sale_at: now+30s
    tranche: 1s
    controller: {min_active: 2}
    page: {texts: {de: {title: Wintertour}}}
`
	c, err := Parse([]byte(in), lookupIn(map[string]string{"SECRET": testSecret}))
	if err != nil {
		t.Fatal(err)
	}
	// The signing key keeps its default id and algorithm.
	eq(t, c.Serve.Keys.Signing, Key{ID: DefaultKeyID, Algorithm: AlgHS256, Secret: testSecret})
	eq(t, c.Serve.Keys.Verify[0], Key{ID: "old", Algorithm: AlgHS256, SecretFile: "/run/secrets/old"})
	eq(t, c.Serve.Keys.Verify[1], Key{ID: "ed", Algorithm: AlgEdDSA, PublicKeyFile: "ed.pub"})

	shop, api := c.Origins[0], c.Origins[1]
	eq(t, shop.MaxConns, DefaultOriginMaxConns)
	eq(t, shop.Retries, DefaultRetries)
	eq(t, shop.HealthCheck, DefaultOrigin().HealthCheck)
	eq(t, api.Retries, 0) // an explicit 0 is not replaced by the default
	eq(t, api.HealthCheck.Path, "")
	eq(t, api.HealthCheck.Interval, Duration(time.Second))
	eq(t, api.HealthCheck.Timeout, Duration(DefaultHealthCheckTimeout))
	eq(t, api.MaxIdleConnDuration, Duration(DefaultMaxIdleConnDuration))

	summer, winter := c.Events[0], c.Events[1]
	d := DefaultEvent()
	eq(t, summer.Tranche, d.Tranche)
	eq(t, summer.Controller, d.Controller)
	eq(t, summer.PositionDisplay, PositionApproximate)
	abs, ok := summer.OnSaleAt.Time()
	eq(t, ok, true)
	eq(t, abs, onSale)
	eq(t, winter.Tranche, Duration(time.Second))
	eq(t, winter.Controller.MinActive, 2)
	eq(t, winter.Controller.InitialActive, d.Controller.InitialActive)
	off, rel := winter.OnSaleAt.Offset()
	eq(t, rel, true)
	eq(t, off, 30*time.Second)
	eq(t, winter.Page.Texts["de"]["title"], "Wintertour")
	eq(t, winter.Page.DefaultLanguage, LangEnglish)
	if len(summer.Page.Texts) != 0 {
		t.Error("events share their texts map")
	}
}

func TestParseProxyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"unknown keys in list elements", `
origins:
  - name: shop
    adresses: [a:1]
    health_check: {intervall: 1s}
routes:
  - {prefix: /, evnt: x}
events:
  - id: a
    caps: {max_actve: 1}
    lanes: [{name: p, invite: x}]
serve:
  keys:
    verify: [{id: x, secrt: y}]
`, []string{
			"line 4: origins[0].adresses: unknown key; did you mean addresses?",
			"line 5: origins[0].health_check.intervall: unknown key; did you mean interval?",
			"line 7: routes[0].evnt: unknown key; did you mean event?",
			"line 10: events[0].caps.max_actve: unknown key; did you mean max_active?",
			"line 11: events[0].lanes[0].invite: unknown key; known keys here: account_secret, allowlist_file, invite_secret, name, priority, share",
			"line 14: serve.keys.verify[0].secrt: unknown key; did you mean secret?"}},
		{"type errors in list elements", `
events:
  - id: a
    on_sale_at: tomorrow
    closes_at: [x]
    tranche: 5
    caps: {max_active: lots}
origins:
  - name: a
    max_conns: 1.5
`, []string{
			`line 4: events[0].on_sale_at: invalid time "tomorrow": want an RFC 3339 time such as 2027-03-01T09:00:00Z, or now, or now+30s`,
			`line 5: events[0].closes_at: want a time such as 2027-03-01T09:00:00Z, now, or now+30s`,
			`line 6: events[0].tranche: invalid duration "5": want a number with a unit, such as 500ms, 1s or 24h`,
			"line 7: events[0].caps.max_active: cannot unmarshal !!str `lots` into int: write a whole number, such as 10",
			"line 10: origins[0].max_conns: must be a whole number"}},
		{"list elements of the wrong shape", `
events:
  - summer
  - [a]
origins:
  - 127.0.0.1:9000
serve:
  keys:
    verify: [k1]
`, []string{
			"line 3: events[0]: cannot unmarshal !!str `summer` into config.Event: write a mapping of keys (docs/configuration.md lists them)",
			"line 4: events[1]: cannot unmarshal !!seq into config.Event: write a mapping of keys (docs/configuration.md lists them)",
			"line 6: origins[0]: cannot unmarshal !!str `127.0.0...` into config.Origin: write a mapping of keys (docs/configuration.md lists them)",
			"line 9: serve.keys.verify[0]: cannot unmarshal !!str `k1` into config.Key: write a mapping of keys (docs/configuration.md lists them)"}},
		{"empty list elements", "events:\n  -\n  - ~\norigins: [null]\n", []string{
			"line 2: events[0]: an empty list element: fill it in or remove its -",
			"line 3: events[1]: an empty list element: fill it in or remove its -",
			"line 4: origins[0]: an empty list element: fill it in or remove its -"}},
		{"a secret from the environment in a time", "events:\n  - on_sale_at: ${SECRET}\n", []string{
			"line 2: events[0].on_sale_at: invalid time (value from the environment): want an RFC 3339 time such as 2027-03-01T09:00:00Z, or now, or now+30s"}},
		{"unknown section names", "servr: {}\nevent: []\n", []string{
			"line 1: servr: unknown key; did you mean serve?",
			"line 2: event: unknown key; did you mean events?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse([]byte(tt.yaml), lookupIn(map[string]string{"SECRET": "SECRET-0123456789"}))
			if c != nil {
				t.Errorf("got a Config with an error")
			}
			wantProblems(t, err, tt.want...)
			if err != nil && strings.Contains(err.Error(), "SECRET-") {
				t.Errorf("a secret leaks: %v", err)
			}
		})
	}
}

// TestParseAliasBombInEvents checks that aliases multiplying each other
// inside list elements that decode themselves stay cheap.
func TestParseAliasBombInEvents(t *testing.T) {
	t.Parallel()
	parseBomb(t, "x0: &x0 {t: lol}\n", "events:\n  - id: a\n    lanes: *x9\n    page: {texts: {en: *x9}}\n")
}
