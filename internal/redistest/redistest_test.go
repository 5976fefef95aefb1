package redistest

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// TestTakenPort: a server asked for a port another redis-server holds
// must fail, not hand out a client of the stranger (whose keys a test
// would then read).
func TestTakenPort(t *testing.T) {
	first := Start(t, Options{})
	_, port, err := net.SplitHostPort(first.Addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Launch(Options{Dir: t.TempDir(), Port: n})
	if err == nil {
		s.Stop()
		t.Fatal("Launch on a taken port returned a server")
	}
	if !strings.Contains(err.Error(), "taken by another redis-server") {
		t.Fatalf("Launch on a taken port: %v", err)
	}
}
