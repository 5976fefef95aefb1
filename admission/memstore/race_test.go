//go:build race

package memstore_test

// raceEnabled: the race detector's shadow memory inflates RSS, so the
// memory tests then check the Go heap only.
const raceEnabled = true
