//go:build race

package proxy

// raceEnabled: under the race detector sync.Pool drops pooled objects at
// random, so allocation counts are meaningless there; the Allocs tests
// skip and `make test` runs them again without -race.
const raceEnabled = true
