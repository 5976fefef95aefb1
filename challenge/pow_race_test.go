//go:build race

package challenge_test

// powRace: the race detector makes sync.Pool drop items at random, so
// allocation counts mean nothing under it.
const powRace = true
