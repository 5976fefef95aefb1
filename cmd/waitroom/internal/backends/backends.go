// Package backends lists the store backends built into waitroom, each
// registering itself by name from its init function: importing this
// package (for its side effects) makes them available to the
// configuration's admission.store and inventory.store, and the challenge
// replay guard that follows admission.store. A new backend is one package
// with a register.go and one line here.
//
// It is not where a backend is chosen: the wiring looks the configured
// name up in admission.Stores, inventory.Stores and
// challenge.ReplayStores.
package backends

import (
	// admission.store: embedded, redis.
	_ "github.com/waitroom/waitroom/admission/memstore"
	_ "github.com/waitroom/waitroom/admission/redisstore"
	// The replay guard beside the admission store: embedded, redis.
	_ "github.com/waitroom/waitroom/challenge/memstore"
	_ "github.com/waitroom/waitroom/challenge/redisstore"
	// inventory.store: embedded, redis.
	_ "github.com/waitroom/waitroom/inventory/memstore"
	_ "github.com/waitroom/waitroom/inventory/redisstore"
)
