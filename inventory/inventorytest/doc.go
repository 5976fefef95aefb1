// Package inventorytest is the conformance suite for inventory.Store: one
// set of behaviours every store must show, run by each store's tests with
// Run. It also holds the linearizability check (porcupine model) that
// the stores' tests run under concurrent load.
//
// It is for tests only; nothing in a waitroom binary imports it.
package inventorytest
