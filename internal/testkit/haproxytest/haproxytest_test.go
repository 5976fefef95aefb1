package haproxytest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A real HAProxy starts on its ports, forwards to a backend and reports
// the backend's HTTP check on its stats page.
func TestStartForwardsAndReportsChecks(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "backend:"+r.URL.Path)
	}))
	defer backend.Close()
	s := Start(t, Options{Config: func(listen, stats string) string {
		return `global
	log stderr format raw local0
defaults
	mode http
	log global
	timeout connect 5s
	timeout client 30s
	timeout server 30s
frontend stats
	bind ` + stats + `
	stats enable
	stats uri /stats
frontend web
	bind ` + listen + `
	default_backend app
backend app
	option httpchk GET /healthz
	server one ` + strings.TrimPrefix(backend.URL, "http://") + ` check inter 100ms
`
	}})
	resp, err := http.Get("http://" + s.Addr + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "backend:/x" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := s.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if len(st) == 1 && st[0].Server == "one" && st[0].Status == "UP" && st[0].Check == "L7OK" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats: %+v\n%s", st, s.LogTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// parseStats skips frontends and backends and reads servers' columns by
// name.
func TestParseStats(t *testing.T) {
	in := "# pxname,svname,qcur,status,check_status,\n" +
		"web,FRONTEND,,OPEN,,\n" +
		"app,one,0,UP,L7OK,\n" +
		"app,two,0,DOWN,L7STS,\n" +
		"app,BACKEND,0,UP,,\n"
	st, err := parseStats(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []ServerStat{{"app", "one", "UP", "L7OK"}, {"app", "two", "DOWN", "L7STS"}}
	if len(st) != 2 || st[0] != want[0] || st[1] != want[1] {
		t.Fatalf("got %+v", st)
	}
}
