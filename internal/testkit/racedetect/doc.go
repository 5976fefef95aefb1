// Package racedetect tells tests whether the binary was built with the
// race detector (-race). Under it sync.Pool drops pooled objects at
// random and the detector allocates and keeps shadow memory, so tests of
// allocation counts skip (`make test` runs them again without -race) and
// memory tests check the Go heap only.
package racedetect
