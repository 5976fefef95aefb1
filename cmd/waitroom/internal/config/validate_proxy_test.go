package config

import (
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
			"origins[0].read_buffer_bytes: must be between 4096 (4 KiB) and 1048576 (1 MiB) (got 0)",
			"origins[0].health_check.interval: must be more than 0, such as 1s (got 0s)",
			"origins[0].health_check.timeout: must be more than 0, such as 1s (got 0s)",
			"origins[0].health_check.unhealthy_after: must be 1 or more (got 0)",
			"origins[0].health_check.healthy_after: must be 1 or more (got 0)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantProblems(t, tt.check(tt.c()), tt.want...)
		})
	}
}

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
		ID: "x", Mode: admission.ModeAlways, QueueOpensAt: onSale, OnSaleAt: onSale,
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
