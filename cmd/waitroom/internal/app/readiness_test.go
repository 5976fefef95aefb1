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
` + showEvent

// showEvent is the origin, route and event of the tests here, with the
// origin's address as the format's third argument.
const showEvent = `
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

// clusterConfig is a replica with the admission store on a Redis
// Cluster, no bot defence, and rate limits a test's loop does not reach.
const clusterConfig = `
log: {level: warn}
serve:
  listen: 127.0.0.1:0
  keys:
    signing: {secret: %[1]s}
  cookies: {secure: never}
  rate_limits:
    per_ip: {rate: 100000, burst: 100000}
    per_prefix: {rate: 100000, burst: 100000}
admin:
  listen: 127.0.0.1:0
  token: %[1]s
admission:
  store: redis
  redis: {cluster: [%[2]s]}
` + showEvent

// TestJoinsAcrossClusterFailover: joins over HTTP while the master of
// the event's slot is killed: the first join sent after Redis finished
// its failover gets 200, and /readyz is 200 again.
func TestJoinsAcrossClusterFailover(t *testing.T) {
	cl := redistest.StartClusterWith(t, redistest.ClusterOptions{Masters: 3, Replicas: 1, NodeTimeout: time.Second})
	origin := httptest.NewServer(http.NotFoundHandler())
	defer origin.Close()
	w, _, stop := runServe(t, fmt.Sprintf(clusterConfig, randomHex(32), strings.Join(cl.Addrs(), ", "),
		strings.TrimPrefix(origin.URL, "http://")))
	defer stop()
	base := "http://" + w.Addr().String()
	join := func() int {
		status, _ := postJoin(t, base, `{"event":"show"}`)
		return status
	}
	if got := join(); got != http.StatusOK {
		t.Fatalf("a join before the kill: %d", got)
	}
	dead := cl.MasterOf(t, "{adm:show}")
	killed := time.Now()
	dead.Kill()
	statuses := map[int]int{}
	stopJoins := make(chan struct{})
	joined := make(chan struct{})
	go func() {
		defer close(joined)
		for {
			select {
			case <-stopJoins:
				return
			default:
			}
			statuses[join()]++
		}
	}()
	cl.WaitFailover(t, dead)
	promoted := time.Now()
	close(stopJoins)
	<-joined
	if got := join(); got != http.StatusOK {
		t.Fatalf("the first join after the failover: %d", got)
	}
	ok := time.Since(promoted)
	waitStatus(t, "http://"+w.AdminAddr().String()+"/readyz", http.StatusOK)
	t.Logf("Redis failed over in %v; joins meanwhile %v; the first join after it took %v",
		promoted.Sub(killed).Round(time.Millisecond), statuses, ok.Round(time.Millisecond))
}
