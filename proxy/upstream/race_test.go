//go:build race

package upstream

// raceEnabled: the race detector allocates, so allocation counts are not
// checked under it.
const raceEnabled = true
