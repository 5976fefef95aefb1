package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

// reloadConfig is a serve configuration with the bot defence on for one
// event; %[1]s is a secret, %[2]s the data directory, %[3]s the origin,
// %[4]s the show's caps, %[5]s more routes, %[6]s more events, %[7]s the
// keys section's body.
const reloadConfig = `
log: {level: warn}
serve:
  listen: 127.0.0.1:0
  keys:
%[7]s
  cookies: {secure: never}
  rate_limits:
    per_ip: {rate: 100000, burst: 100000}
    per_prefix: {rate: 100000, burst: 100000}
admin:
  listen: ""
admission:
  data_dir: %[2]s
bot_defence:
  secret: %[1]s
  signals: []
origins:
  - name: shop
    addresses: [%[3]s]
routes:
  - prefix: /show/
    event: show
  - prefix: /guarded/
    event: guarded
%[5]s
events:
  - id: show
    landing_path: /show/
    caps: %[4]s
  - id: guarded
    landing_path: /guarded/
    challenge:
      mode: on
      light: {bits: 4, puzzles: 16}
%[6]s
`

// TestReloadRace reloads an in-process waitroom over and over (events
// added and removed, caps and page names changed, keys rotated, bot
// defence rebuilt) while visitors poll their status and request gated
// pages; run with -race. Every reload applies, and every poll answers
// with the visitor's own place.
func TestReloadRace(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "origin:"+r.URL.Path)
	}))
	t.Cleanup(site.Close)
	secret := "a8f3c61d0e9b47f2b5d4c7e1f09a3b6d2c8e5f1a7b4d9c03"
	dir := t.TempDir()
	file := filepath.Join(dir, "waitroom.yaml")
	write := func(i int) string {
		caps := fmt.Sprintf("{max_active: %d}", 50+i%3)
		routes, events := "", ""
		if i%2 == 1 {
			routes = "  - prefix: /extra/\n    event: extra\n"
			events = fmt.Sprintf("  - id: extra\n    name: Extra %d\n    landing_path: /extra/\n", i)
		}
		keys := "    signing: {id: k1, secret: " + secret + "}"
		if i >= 4 {
			keys = "    signing: {id: k2, secret: " + secret + "-two}\n    verify:\n      - {id: k1, secret: " + secret + "}"
		}
		text := fmt.Sprintf(reloadConfig, secret, filepath.Join(dir, "admission"), strings.TrimPrefix(site.URL, "http://"),
			caps, routes, events, keys)
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return text
	}
	cfg, err := config.Parse([]byte(write(0)), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if err := config.ValidateFor(cfg, config.RoleProxy); err != nil {
		t.Fatal(err)
	}
	w, err := NewServe(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), Listeners{})
	if err != nil {
		t.Fatal(err)
	}
	w.ConfigFile = file
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve stopped with %v", err)
		}
	})
	base := "http://" + w.Addr().String()

	var stop atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, 16)
	var polls atomic.Int64
	for i := range 4 {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar}
		get := func(method, path, body string) (int, string, error) {
			req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
			req.Header.Set("User-Agent", fmt.Sprintf("visitor-%d", i))
			req.Header.Set("Accept", "application/json")
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := c.Do(req)
			if err != nil {
				return 0, "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b), err
		}
		code, body, err := get("POST", "/_wr/api/join", `{"event":"show"}`)
		if err != nil || code != 200 {
			t.Fatalf("join: %d %s %v", code, body, err)
		}
		var first struct{ Visitor string }
		json.Unmarshal([]byte(body), &first)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				code, body, err := get("GET", "/_wr/api/status?event=show", "")
				var st struct{ Visitor string }
				json.Unmarshal([]byte(body), &st)
				if err != nil || code != 200 || st.Visitor != first.Visitor {
					errc <- errors.Join(err, fmt.Errorf("status: %d %s (visitor %s)", code, body, first.Visitor))
					return
				}
				polls.Add(1)
				get("GET", "/show/page", "")
				get("GET", "/_wr/api/challenge?event=guarded", "")
			}
		}()
	}
	for i := 1; i <= 8; i++ {
		write(i)
		res, err := w.Reload(ctx)
		if err != nil || res.Result != "applied" {
			t.Fatalf("reload %d: %+v %v", i, res, err)
		}
		wantEvents := "[extra]"
		if got := fmt.Sprint(res.Events.Added); i%2 == 1 && got != wantEvents {
			t.Fatalf("reload %d added %s", i, got)
		}
		if got := fmt.Sprint(res.Events.Removed); i%2 == 0 && got != wantEvents {
			t.Fatalf("reload %d removed %s", i, got)
		}
		for n := polls.Load() + 8; polls.Load() < n && len(errc) == 0; {
			time.Sleep(10 * time.Millisecond)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}
