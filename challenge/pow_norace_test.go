//go:build !race

package challenge_test

const powRace = false
