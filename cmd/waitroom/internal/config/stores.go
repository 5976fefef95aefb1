package config

import (
	"log/slog"
	"strings"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/challenge"
	_ "github.com/waitroom/waitroom/cmd/waitroom/internal/backends" // the built-in store backends
	"github.com/waitroom/waitroom/internal/redisconn"
	"github.com/waitroom/waitroom/internal/registry"
	"github.com/waitroom/waitroom/inventory"
)

// Settings returns r as the connection settings the Redis store backends
// take.
func (r Redis) Settings() redisconn.Settings {
	return redisconn.Settings{URL: r.URL, Cluster: r.Cluster, Username: r.Username, Password: r.Password,
		PoolSize: r.PoolSize, RequirePersistence: r.RequirePersistence,
		Sentinel: redisconn.Sentinel{Master: r.Sentinel.Master, Addresses: r.Sentinel.Addresses,
			Username: r.Sentinel.Username, Password: r.Sentinel.Password},
		MinReplicasAcked: r.MinReplicasAcked, AckTimeout: r.AckTimeout.Std()}
}

// StoreConfig returns the section's settings for the admission store
// backend (admission.Stores), with conn as its Redis connection (made
// from a.Redis) and log as its logger.
func (a *Admission) StoreConfig(conn *redisconn.Conn, log *slog.Logger) admission.StoreConfig {
	return admission.StoreConfig{DataDir: a.DataDir, Redis: conn, RedisPrefix: a.RedisPrefix,
		ReplayPrefix: a.ReplayPrefix(), Logger: log}
}

// ReplayPrefix is the key prefix of the challenge replay guard in the
// admission store's Redis; the admission store spends a join's challenge
// under the same keys.
func (a *Admission) ReplayPrefix() string { return a.RedisPrefix + "replay:" }

// StoreConfig returns the section's settings for the inventory store
// backend (inventory.Stores), with conn as its Redis connection (made
// from inv.Redis) and log as its logger.
func (inv *Inventory) StoreConfig(conn *redisconn.Conn, log *slog.Logger) inventory.StoreConfig {
	return inventory.StoreConfig{DataDir: inv.DataDir, Redis: conn, IdempotencyTTL: inv.IdempotencyTTL.Std(),
		HoldRetention: inv.HoldRetention.Std(), Logger: log}
}

// sharedAdmission reports whether c's admission store is shared by
// replicas (an unknown one is not: its name is an error of its own).
func sharedAdmission(c *Config) bool {
	f, ok := admission.Stores.Lookup(string(c.Admission.Store))
	return ok && f.Shared()
}

// admissionStore checks admission.store against the registered backends
// and has the backend check the settings it reads. It reports whether the
// backend accepted them.
func (v *validator) admissionStore(path string, a *Admission, c *Config) bool {
	f, ok := admission.Stores.Lookup(string(a.Store))
	if !ok {
		v.fail(path+".store", "must be %s (got %q)", orList(admission.Stores.Names()), a.Store)
		return false
	}
	if _, ok := challenge.ReplayStores.Lookup(string(a.Store)); !ok && c.ChallengesOn() {
		v.fail(path+".store", "%q has no replay guard for the bot defence (stores with one: %s)", a.Store, orList(challenge.ReplayStores.Names()))
	}
	return v.backend(path, f.Validate(a.StoreConfig(redisconn.New(a.Redis.Settings(), nil), nil)))
}

// inventoryStore checks inventory.store as admissionStore does
// admission.store.
func (v *validator) inventoryStore(path string, inv *Inventory) {
	f, ok := inventory.Stores.Lookup(string(inv.Store))
	if !ok {
		v.fail(path+".store", "must be %s (got %q)", orList(inventory.Stores.Names()), inv.Store)
		return
	}
	v.backend(path, f.Validate(inv.StoreConfig(redisconn.New(inv.Redis.Settings(), nil), nil)))
}

// backend records a store backend's validation errors under the section
// at path, and reports whether there were none.
func (v *validator) backend(path string, err error) bool {
	for _, fe := range registry.FieldErrors(err) {
		p := path
		if fe.Path != "" {
			p = joinPath(path, fe.Path)
		}
		v.fail(p, "%s", fe.Msg)
	}
	return err == nil
}

// orList is names as prose: "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
