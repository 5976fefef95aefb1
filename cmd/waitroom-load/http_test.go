package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/proctest"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/api"
	"github.com/waitroom/waitroom/inventory/client"
	"github.com/waitroom/waitroom/inventory/memstore"
)

// TestCountingOrigin: a visitor is active from their first request to
// the complete path (answered with X-Waitroom-Complete), and the origin
// keeps the most active at once.
func TestCountingOrigin(t *testing.T) {
	o := newCountingOrigin("/shop/done", time.Hour)
	srv := httptest.NewServer(o)
	defer srv.Close()
	get := func(who, path string) http.Header {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if who != "" {
			req.Header.Set("X-Load-Visitor", who)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.Header
	}
	get("", "/healthz") // not a visitor
	get("1", "/shop/")
	get("2", "/shop/")
	get("1", "/shop/seats")
	if h := get("1", "/shop/done"); h.Get("X-Waitroom-Complete") != "1" {
		t.Fatalf("the complete path answered %v", h)
	}
	get("1", "/shop/") // done visitors stay done
	get("3", "/shop/")
	st, err := fetchOriginStats(srv.URL + StatsPath)
	if err != nil {
		t.Fatal(err)
	}
	if st.Visitors != 3 || st.MaxActive != 2 || st.Active != 2 || st.Completes != 1 || st.Requests != 7 {
		t.Fatalf("stats %+v, want 3 visitors, at most 2 active, 2 active now, 1 complete, 7 requests", st)
	}
}

// TestCountingOriginIdle: a visitor silent for longer than the idle time
// is no longer active.
func TestCountingOriginIdle(t *testing.T) {
	o := newCountingOrigin("/done", time.Nanosecond)
	srv := httptest.NewServer(o)
	defer srv.Close()
	for _, who := range []string{"1", "2"} {
		req, _ := http.NewRequest("GET", srv.URL+"/", nil)
		req.Header.Set("X-Load-Visitor", who)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		time.Sleep(time.Millisecond) // past the idle time: the clock must move
	}
	if st := o.stats(); st.Active != 0 || st.MaxActive != 1 || st.Visitors != 2 {
		t.Fatalf("stats %+v, want none active, at most 1, 2 visitors", st)
	}
}

func TestRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var ts []time.Time
	for i := range 10 { // 10 events over 4.5 s, 4 of them in the first half second
		d := time.Duration(i) * 500 * time.Millisecond
		if i < 4 {
			d = time.Duration(i) * 100 * time.Millisecond
		}
		ts = append(ts, t0.Add(d))
	}
	mean, peak := rate(ts)
	if mean < 2.2 || mean > 2.3 || peak != 4 {
		t.Fatalf("rate: mean %.2f, peak %d; want 10/4.5 s and 4 in one second", mean, peak)
	}
	if m, p := rate(nil); m != 0 || p != 0 {
		t.Fatalf("rate of nothing: %v %v", m, p)
	}
}

// startSidecar runs a real sidecar in this process (the embedded store
// behind the HTTP API on a loopback port) with one section of n seats.
func startSidecar(t *testing.T, n int) (*client.Client, string) {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := memstore.Open(memstore.Options{Dir: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(store, api.Options{Token: sidecarToken, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done; store.Close() })
	url := "http://" + ln.Addr().String()
	c := client.New(url, sidecarToken)
	if _, err := c.PutEvent(ctx, "ev", inventory.EventDef{Sections: []inventory.Section{{ID: "A", Rows: []inventory.Row{{ID: "1", Seats: n}}}}}, "test"); err != nil {
		t.Fatal(err)
	}
	return c, url
}

const sidecarToken = "load-test-token-0123456789"

// roomConfig is waitroom serve's configuration for TestOneReplica: one
// event, always queueing, on sale at start-up, with the light proof of
// work, linked to the sidecar's event.
const roomConfig = `
log: {level: warn}
serve:
  listen: %s
  binding: []
  max_connections_per_client: 0
  keys: {signing: {id: t, algorithm: HS256, secret: "${WAITROOM_SIGNING_SECRET}"}}
  cookies: {secure: never}
  rate_limits: {per_ip: {rate: 0, burst: 0}, per_prefix: {rate: 0, burst: 0}}
  inventory: {url: "%s", token: "${WAITROOM_INVENTORY_TOKEN}", refresh: 1s}
admin: {listen: "127.0.0.1:0", token: "${WAITROOM_ADMIN_TOKEN}"}
admission: {store: embedded, data_dir: "%s"}
bot_defence: {secret: "${WAITROOM_CHALLENGE_SECRET}", signals: []}
origins: [{name: o, addresses: ["%s"]}]
routes: [{prefix: /shop/, event: e}]
events:
  - id: e
    on_sale_at: now
    landing_path: /shop/
    inventory_event: ev
    caps: {max_active: %d, max_new_per_minute: 300}
    challenge: {mode: on, light: {bits: 4, puzzles: 4}}
`

// startWaitroom builds waitroom and runs waitroom serve in front of
// origin, linked to the sidecar at invURL; it returns its address.
func startWaitroom(t *testing.T, origin, invURL string, maxActive int) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "waitroom")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/waitroom/waitroom/cmd/waitroom").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var listen string
	err := proctest.OnFreePorts("waitroom serve", 5, func(port int) error {
		listen = "127.0.0.1:" + strconv.Itoa(port)
		cfg := filepath.Join(dir, "waitroom.yaml")
		body := fmt.Sprintf(roomConfig, listen, invURL, filepath.Join(dir, "data"), origin, maxActive)
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			return proctest.Permanent(err)
		}
		cmd := exec.Command(bin, "serve", "-c", cfg)
		cmd.Env = append(os.Environ(), "WAITROOM_SIGNING_SECRET="+rand.Text()+rand.Text(), "WAITROOM_ADMIN_TOKEN="+rand.Text()+rand.Text(),
			"WAITROOM_CHALLENGE_SECRET="+rand.Text()+rand.Text(), "WAITROOM_INVENTORY_TOKEN="+sidecarToken)
		logPath := filepath.Join(dir, "waitroom.log")
		f, err := os.Create(logPath)
		if err != nil {
			return proctest.Permanent(err)
		}
		cmd.Stdout, cmd.Stderr = f, f
		p, err := proctest.Start(cmd, proctest.Wait{Name: "waitroom serve", Addr: listen, Timeout: 20 * time.Second,
			Log: func() string { return proctest.LogTail(logPath, 5) }})
		if err != nil {
			return err
		}
		t.Cleanup(func() { p.Stop(syscall.SIGTERM, 10*time.Second); f.Close() })
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return listen
}

// TestBuyAndCheckSales: twice as many buyers as seats, some buying
// twice with the same idempotency keys: every seat is sold once, the
// rest are told sold out, and the check finds nothing wrong; an order
// made up to share a seat is caught.
func TestBuyAndCheckSales(t *testing.T) {
	inv, _ := startSidecar(t, 10)
	c := newCrowd(crowdConfig{Inventory: inv, InventoryEvent: "ev", Section: "A"}, nil)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.buy(t.Context(), &visit{id: i})
			if i%5 == 0 { // a retry of the whole purchase: the keys make it the same one
				c.buy(t.Context(), &visit{id: i})
			}
		}()
	}
	wg.Wait()
	orders := map[string]bool{}
	for _, o := range c.orders {
		orders[o.ID] = true
	}
	if len(orders) != 10 || c.buyErrors.Load() != 0 {
		t.Fatalf("%d distinct orders (%d confirms, %d sold out, %d failed), want 10", len(orders), c.confirms.Load(), c.soldOut.Load(), c.buyErrors.Load())
	}
	if s := checkSales(t.Context(), inv, "ev", c.orders); s.SoldTwice != 0 || s.InTwoOrders != 0 || s.NotSold != 0 || s.Err != "" {
		t.Fatalf("a clean sale checked as %+v", s)
	}
	forged := append(c.orders, inventory.Order{ID: "forged", Seats: c.orders[0].Seats})
	if s := checkSales(t.Context(), inv, "ev", forged); s.InTwoOrders != 1 || s.NotSold != 1 {
		t.Fatalf("a seat in two orders checked as %+v", s)
	}
}

// TestHTTPFlags: a run that cannot be made says why and exits 2.
func TestHTTPFlags(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-targets", "http://127.0.0.1:1"},
		{"-targets", "127.0.0.1:1", "-event", "e"},
		{"-targets", "http://127.0.0.1:1", "-event", "e", "-balance", "round-robin"},
		{"-targets", "http://127.0.0.1:1", "-event", "e", "-gate", "shop"},
	} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"http"}, args...), &out, &errb); code != 2 || !strings.Contains(errb.String(), "waitroom-load http:") {
			t.Errorf("%q: exit %d, %s", args, code, errb.String())
		}
	}
}

// TestOneReplica runs a small crowd through a real waitroom serve (the
// embedded store), a counting origin and a sidecar, with a second
// replica address that refuses connections, which the crowd steps
// around: every visitor joins with proof of work, polls, is admitted,
// buys and is done; no join is lost, no seat sold twice, the cap holds.
// bench/chaos runs three replicas on a Redis Cluster with faults.
func TestOneReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs waitroom serve")
	}
	const seats, visitors, maxActive = 20, 16, 4
	inv, invURL := startSidecar(t, seats)
	origin := httptest.NewServer(newCountingOrigin("/shop/done", time.Minute))
	defer origin.Close()
	listen := startWaitroom(t, strings.TrimPrefix(origin.URL, "http://"), invURL, maxActive)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // refuses connections: a replica that is down
	t.Setenv("WAITROOM_INVENTORY_TOKEN", sidecarToken)
	var out, errb bytes.Buffer
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	code := run([]string{"http", "-targets", down.URL + ",http://" + listen, "-event", "e", "-visitors", strconv.Itoa(visitors),
		"-arrive", "1s", "-think", "200ms", "-inventory", invURL, "-inventory-event", "ev", "-section", "A", "-origin-stats", origin.URL + StatsPath,
		"-max-active", strconv.Itoa(maxActive), "-cap-slack", "5", "-json", jsonPath, "-check"}, &out, &errb)
	t.Logf("%s%s", out.String(), errb.String())
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var r httpReport
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Joins != visitors || r.Admitted != visitors || r.OriginOK != visitors || r.Confirms != visitors || r.Completes != visitors ||
		r.Solved != visitors || r.Draws.Checked != visitors || r.Draws.Lost != 0 || r.Sales == nil || r.Sales.Orders != visitors {
		t.Fatalf("report %+v", r)
	}
	if r.Polls < visitors/2 || r.OriginMaxActive < 1 {
		t.Fatalf("%d polls, origin max %d active: the crowd did not wait its turn", r.Polls, r.OriginMaxActive)
	}
	if a, err := inv.Availability(t.Context(), "ev"); err != nil || a.Sold != visitors {
		t.Fatalf("the sidecar sold %+v (%v), want %d seats", a, err, visitors)
	}
}
