package pebbletest

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// TestStart: pebble answers its directory over HTTPS that CAFile's root
// verifies, and its management API gives the issuing root and
// intermediate; Stop ends both processes.
func TestStart(t *testing.T) {
	s := Start(t, Options{HTTPPort: 1, TLSPort: 1})
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: s.Roots(), MinVersion: tls.VersionTLS12}}}
	resp, err := c.Get(s.DirectoryURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var dir map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&dir); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"newAccount", "newNonce", "newOrder"} {
		if _, ok := dir[k].(string); !ok {
			t.Errorf("directory has no %s: %v", k, dir)
		}
	}
	if _, _, err := s.IssuerPool(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Requests("/order-plz"); err != nil || n != 0 {
		t.Fatalf("orders before any client: %d, %v", n, err)
	}
	pebble, dns := s.pebble, s.dns
	s.Stop()
	for _, p := range []interface{ Done() <-chan struct{} }{pebble, dns} {
		select {
		case <-p.Done():
		default:
			t.Error("a process still runs after Stop")
		}
	}
}
