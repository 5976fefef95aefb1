package upstream

import (
	"testing"

	"github.com/waitroom/waitroom/internal/testkit/racedetect"
)

// TestForwardAllocations: a GET with cookies and a small response body,
// through a real fasthttp origin, allocates nothing once the pools are
// warm — Forward, the origin server and the sockets together.
func TestForwardAllocations(t *testing.T) {
	if racedetect.Enabled || testing.Short() {
		t.Skip("allocation counts are checked without -race, in the full run")
	}
	o := testOrigin(t, Config{}, smallOrigin(t))
	f := newForwardFixture(t, o)
	for range 200 {
		f.run()
	}
	if n := testing.AllocsPerRun(500, f.run); n != 0 {
		t.Fatalf("%v allocations per forwarded request", n)
	}
}

// TestForwardAllocationsClientIPHeader: setting a client address header
// (CF-Connecting-IP) and restarting X-Forwarded-For allocates nothing
// either.
func TestForwardAllocationsClientIPHeader(t *testing.T) {
	if racedetect.Enabled || testing.Short() {
		t.Skip("allocation counts are checked without -race, in the full run")
	}
	o := testOrigin(t, Config{}, smallOrigin(t))
	f := newForwardFixture(t, o)
	f.fw.OwnXFF, f.fw.ClientIPHeaders = true, [][]byte{[]byte("Cf-Connecting-Ip")}
	for range 200 {
		f.run()
	}
	if n := testing.AllocsPerRun(500, f.run); n != 0 {
		t.Fatalf("%v allocations per forwarded request", n)
	}
}
