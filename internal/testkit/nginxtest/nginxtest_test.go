package nginxtest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
)

func TestStartServes(t *testing.T) {
	s := Start(t, Options{HTTP: `
  server {
    listen 127.0.0.1:{{PORT}};
    location / { return 200 "hello from nginx\n"; }
  }`})
	resp, err := http.Get(s.URL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "hello from nginx\n" {
		t.Fatalf("got %d %q", resp.StatusCode, b)
	}
	s.Stop()
	if _, err := http.Get(s.URL() + "/"); err == nil {
		t.Fatal("nginx still answers after Stop")
	}
}

func TestBadConfigFails(t *testing.T) {
	_, err := Launch(Options{Dir: t.TempDir(), HTTP: "this is not nginx syntax;"})
	if err == nil {
		t.Fatal("a broken configuration started")
	}
}

// TestListenerTaken: nginx that cannot take all its sockets gives up; the
// one it did take answers meanwhile, and must not pass for a started
// server (the same holds when another test's server took our port).
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
	opts := Options{Dir: t.TempDir(), Workers: 1, HTTP: fmt.Sprintf(`
  server { listen 127.0.0.1:{{PORT}}; return 200; }
  server { listen %s; return 200; }`, ln.Addr())}
	// One attempt: Launch's retries on other ports would each wait out
	// nginx's own retries on the taken socket.
	if s, err := launch(bin, opts, 1); err == nil {
		s.Stop()
		t.Fatal("nginx without all its listeners passed for started")
	}
}
