package nginxtest

import (
	"io"
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
