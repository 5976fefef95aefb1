package backends

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/internal/redisconn"
	"github.com/waitroom/waitroom/internal/registry"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/inventory"
)

// The built-in backends are registered under the configuration's values,
// and every admission store has its replay guard.
func TestRegistered(t *testing.T) {
	want := []string{"embedded", "redis"}
	for name, got := range map[string][]string{
		"admission.Stores":       admission.Stores.Names(),
		"inventory.Stores":       inventory.Stores.Names(),
		"challenge.ReplayStores": challenge.ReplayStores.Names(),
	} {
		if !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	for _, name := range admission.Stores.Names() {
		if _, ok := challenge.ReplayStores.Lookup(name); !ok {
			t.Errorf("admission store %q has no replay guard", name)
		}
	}
	if _, ok := admission.Stores.Lookup("memory"); ok {
		t.Error(`admission store "memory" is known`)
	}
}

// A second backend under a taken name is a programming error.
func TestRegisterTwicePanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"admission", func() { f, _ := admission.Stores.Lookup("embedded"); admission.Stores.Register("embedded", f) }},
		{"inventory", func() { f, _ := inventory.Stores.Lookup("redis"); inventory.Stores.Register("redis", f) }},
		{"challenge", func() { f, _ := challenge.ReplayStores.Lookup("redis"); challenge.ReplayStores.Register("redis", f) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if p, _ := recover().(string); !strings.Contains(p, "registered twice") {
					t.Errorf("panic %q, want one saying registered twice", p)
				}
			}()
			tc.f()
		})
	}
}

func fieldPaths(err error) string {
	var paths []string
	for _, fe := range registry.FieldErrors(err) {
		paths = append(paths, fe.Path+": "+fe.Msg)
	}
	return strings.Join(paths, "; ")
}

// Each backend checks the settings it reads, with paths relative to the
// section.
func TestValidate(t *testing.T) {
	none := redisconn.New(redisconn.Settings{}, nil)
	some := redisconn.New(redisconn.Settings{URL: "redis://127.0.0.1:1/0"}, nil)
	adm := func(name string) admission.StoreFactory { f, _ := admission.Stores.Lookup(name); return f }
	inv := func(name string) inventory.StoreFactory { f, _ := inventory.Stores.Lookup(name); return f }
	redisMsg := "redis: set url (standalone Redis), cluster (Redis Cluster seed addresses) or sentinel (master name and Sentinel addresses) with store: redis"
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"admission embedded without data_dir", adm("embedded").Validate(admission.StoreConfig{Redis: some}), "data_dir: must be set with store: embedded"},
		{"admission embedded", adm("embedded").Validate(admission.StoreConfig{DataDir: "/d"}), ""},
		{"admission redis without redis", adm("redis").Validate(admission.StoreConfig{DataDir: "/d", Redis: none}), redisMsg},
		{"admission redis", adm("redis").Validate(admission.StoreConfig{Redis: some}), ""},
		{"inventory embedded without data_dir", inv("embedded").Validate(inventory.StoreConfig{}), "data_dir: must be set with store: embedded"},
		{"inventory redis without redis", inv("redis").Validate(inventory.StoreConfig{Redis: none}), redisMsg},
		{"inventory redis", inv("redis").Validate(inventory.StoreConfig{Redis: some}), ""},
	} {
		if got := fieldPaths(tc.err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if !adm("redis").Shared() || adm("embedded").Shared() {
		t.Error("only the redis admission store is shared by replicas")
	}
}

// A setting that fails at start-up is named, relative to the section.
func TestBuildErrorsNameTheSetting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	down := redisconn.New(redisconn.Settings{URL: "redis://127.0.0.1:1/0"}, nil)
	defer down.Close()
	badURL := redisconn.New(redisconn.Settings{URL: "redis://127.0.0.1:notaport/0"}, nil)
	adm := func(name string) admission.StoreFactory { f, _ := admission.Stores.Lookup(name); return f }
	inv := func(name string) inventory.StoreFactory { f, _ := inventory.Stores.Lookup(name); return f }
	for _, tc := range []struct {
		name       string
		build      func() error
		key, value string
	}{
		{"admission data_dir", func() error { _, err := adm("embedded").Build(ctx, admission.StoreConfig{DataDir: file}); return err }, "data_dir", file},
		{"inventory data_dir", func() error { _, err := inv("embedded").Build(ctx, inventory.StoreConfig{DataDir: file}); return err }, "data_dir", file},
		{"admission redis down", func() error { _, err := adm("redis").Build(ctx, admission.StoreConfig{Redis: down}); return err }, "redis.url", "127.0.0.1:1"},
		{"inventory redis down", func() error { _, err := inv("redis").Build(ctx, inventory.StoreConfig{Redis: down}); return err }, "redis.url", "127.0.0.1:1"},
		{"admission bad url", func() error { _, err := adm("redis").Build(ctx, admission.StoreConfig{Redis: badURL}); return err }, "redis.url", ""},
	} {
		err := tc.build()
		var se *registry.SettingError
		if !errors.As(err, &se) || se.Key != tc.key || se.Value != tc.value {
			t.Errorf("%s: %v, want a setting error for %s %s", tc.name, err, tc.key, tc.value)
		}
	}
}

// Every backend builds a working store, and the Redis ones share the one
// connection of their section.
func TestBuild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	conn := redisconn.New(redisconn.Settings{URL: srv.URL()}, nil)
	defer conn.Close()
	for _, name := range []string{"embedded", "redis"} {
		f, _ := admission.Stores.Lookup(name)
		s, err := f.Build(ctx, admission.StoreConfig{DataDir: filepath.Join(dir, "adm"), Redis: conn, RedisPrefix: "t:adm:"})
		if err != nil {
			t.Fatalf("admission %s: %v", name, err)
		}
		if ok, err := s.Lease(ctx, "e", "me", time.Minute); !ok || err != nil {
			t.Errorf("admission %s: Lease = %v, %v", name, ok, err)
		}
		s.Close()
		fi, _ := inventory.Stores.Lookup(name)
		is, err := fi.Build(ctx, inventory.StoreConfig{DataDir: filepath.Join(dir, "inv"), Redis: conn})
		if err != nil {
			t.Fatalf("inventory %s: %v", name, err)
		}
		if err := is.Ping(ctx); err != nil {
			t.Errorf("inventory %s: Ping: %v", name, err)
		}
		is.Close()
		fg, _ := challenge.ReplayStores.Lookup(name)
		g, err := fg.Build(ctx, challenge.ReplayStoreConfig{Redis: conn, RedisPrefix: "t:replay:", Window: time.Minute})
		if err != nil {
			t.Fatalf("replay guard %s: %v", name, err)
		}
		for i, want := range []bool{true, false} {
			if ok, err := g.Redeem(ctx, []byte("id-"+name), time.Now().Add(time.Minute)); ok != want || err != nil {
				t.Errorf("replay guard %s: redeem %d = %v, %v; want %v", name, i, ok, err, want)
			}
		}
		g.Close()
	}
}
