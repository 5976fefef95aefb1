package freeport

import (
	"net"
	"strconv"
	"testing"
)

// TestNeverTwice: ports handed out are distinct and bindable.
func TestNeverTwice(t *testing.T) {
	seen := map[int]bool{}
	for range 200 {
		p, err := Get()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
	p, err := Get()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		t.Fatalf("the port handed out cannot be bound: %v", err)
	}
	ln.Close()
}
