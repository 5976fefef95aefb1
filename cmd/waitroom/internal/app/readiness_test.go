package app

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// readyConfig is a replica with the admission store in Redis, an admin
// listener, and the seat-hold sidecar in the process on the same Redis.
const readyConfig = `
log: {level: warn}
serve:
  listen: 127.0.0.1:0
  keys:
    signing: {secret: %[1]s}
  cookies: {secure: never}
  with_inventory: %[4]v
admin:
  listen: 127.0.0.1:0
  token: %[1]s
admission:
  store: redis
  redis: {url: %[2]s}
inventory:
  listen: 127.0.0.1:0
  api_token: %[1]s
  store: redis
  redis: {url: %[2]s}
origins:
  - name: shop
    addresses: [%[3]s]
routes:
  - prefix: /show/
    event: show
events:
  - id: show
    on_sale_at: 2030-01-01T10:00:00Z
    queue_opens_at: 2020-01-01T10:00:00Z
    landing_path: /show/
`

// status GETs url and returns the status code (0 when it cannot connect).
func status(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// waitStatus polls url until it answers want, for at most 20 s (a wide
// margin: the figure is logged, not asserted), and returns how long it took.
func waitStatus(t *testing.T, url string, want int) time.Duration {
	t.Helper()
	start := time.Now()
	for status(t, url) != want {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("%s did not answer %d within 20s", url, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// TestReadyzFollowsRedis: /readyz of waitroom serve (admission store in
// Redis, and the in-process sidecar's store) and of the sidecar answer
// 503 on the first probe after Redis is killed, and 200 again by
// themselves once it is back.
func TestReadyzFollowsRedis(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	origin := httptest.NewServer(http.NotFoundHandler())
	defer origin.Close()
	cfgText := fmt.Sprintf(readyConfig, randomHex(32), srv.URL(), strings.TrimPrefix(origin.URL, "http://"), true)
	w, _, stop := runServe(t, cfgText)
	defer stop()
	urls := map[string]string{
		"serve":   "http://" + w.AdminAddr().String() + "/readyz",
		"sidecar": "http://" + w.InventoryAddr().String() + "/readyz",
	}
	for _, u := range urls {
		waitStatus(t, u, http.StatusOK)
	}
	srv.Kill()
	for name, u := range urls {
		if got := status(t, u); got != http.StatusServiceUnavailable {
			t.Errorf("%s /readyz with Redis down: %d, want 503", name, got)
		}
	}
	srv.Restart()
	back := time.Now()
	for name, u := range urls {
		waitStatus(t, u, http.StatusOK)
		t.Logf("%s /readyz: 200 again %v after Redis answered", name, time.Since(back).Round(time.Millisecond))
	}
}
