package caddytest

import (
	"io"
	"net"
	"net/http"
	"testing"
)

func TestStartServes(t *testing.T) {
	s := Start(t, Options{Site: `	respond "hello from caddy"`})
	resp, err := http.Get(s.URL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "hello from caddy" {
		t.Fatalf("got %d %q", resp.StatusCode, b)
	}
	s.Stop()
	if _, err := http.Get(s.URL() + "/"); err == nil {
		t.Fatal("caddy still answers after Stop")
	}
}

func TestBadConfigFails(t *testing.T) {
	_, err := Launch(Options{Dir: t.TempDir(), Site: "this_is_not_a_directive"})
	if err == nil {
		t.Fatal("a broken configuration started")
	}
}

// TestListenerTaken: Caddy that cannot take its port exits, and the
// stranger holding the port must not pass for a started server.
func TestListenerTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: ln.Addr().String(), Dir: t.TempDir()}
	if err := s.writeConfig(Options{Site: `	respond "x"`}); err != nil {
		t.Fatal(err)
	}
	if err := s.start(bin); err == nil {
		s.Stop()
		t.Fatal("caddy without its listener passed for started")
	}
}
