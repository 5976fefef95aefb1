package chaos

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
)

var (
	long     = flag.Bool("chaos.long", false, "run the long scenario (make chaos) instead of the short one")
	noFaults = flag.Bool("chaos.nofaults", false, "kill nothing: the run the capacity model is checked against")
	costFile = flag.String("chaos.costs", "", "per-operation CPU costs (go run ./bench/capacity -out FILE) to check the run's CPU against")
	balance  = flag.String("chaos.balance", "sticky", "how the crowd spreads over the replicas: sticky or random")
)

// scenario is one run's shape.
type scenario struct {
	Visitors        int
	Arrive          time.Duration // arrivals spread over this from the crowd's start
	PreQueue        time.Duration // the on-sale this long after the crowd's start
	Think           time.Duration // at the origin before buying
	MaxActive       int
	MaxNewPerMinute int
	Seats           int
	Balance         string
	// Faults, from the crowd's start: kill -9 a waitroom replica, then
	// the Redis master holding the event, then restart both.
	KillReplica, KillMaster, Restart time.Duration
	Deadline                         time.Duration // the crowd's run at most
}

// short runs in make test: a small crowd, the faults within its sale.
var short = scenario{Visitors: 60, Arrive: 14 * time.Second, PreQueue: 3 * time.Second, Think: 2 * time.Second,
	MaxActive: 10, MaxNewPerMinute: 300, Seats: 80, Balance: "sticky",
	KillReplica: 4 * time.Second, KillMaster: 8 * time.Second, Restart: 16 * time.Second, Deadline: 3 * time.Minute}

// longRun is make chaos: a larger crowd over a longer sale.
var longRun = scenario{Visitors: 2000, Arrive: time.Minute, PreQueue: 15 * time.Second, Think: 3 * time.Second,
	MaxActive: 50, MaxNewPerMinute: 1500, Seats: 2500, Balance: "sticky",
	KillReplica: 30 * time.Second, KillMaster: 60 * time.Second, Restart: 90 * time.Second, Deadline: 10 * time.Minute}

const event = "chaos"

// slack is the bound the cap may be exceeded by: one tick's admissions
// (the max_new_per_minute bucket holds one 1 s tick's share).
func (s scenario) slack() int { return (s.MaxNewPerMinute + 59) / 60 }

// report is the part of waitroom-load http -json the scenario reads.
type report struct {
	Joins           int64   `json:"joins"`
	JoinTries       int64   `json:"join_tries"`
	Challenges      int64   `json:"challenges"`
	Polls           int64   `json:"polls"`
	OriginPages     int64   `json:"origin_pages"`
	Completes       int64   `json:"completes"`
	Admitted        int64   `json:"admitted"`
	Confirms        int64   `json:"confirms"`
	GaveUp          int64   `json:"gave_up"`
	JoinsPerSec     float64 `json:"joins_per_s"`
	PollsPerSec     float64 `json:"polls_per_s"`
	AdmittedPerMin  float64 `json:"admitted_per_min"`
	LongestGapMS    int64   `json:"longest_admission_gap_ms"`
	LongestGapAtMS  int64   `json:"longest_admission_gap_at_ms"`
	ETAShown        int     `json:"eta_shown"`
	ETAShare        float64 `json:"eta_share"`
	OriginMaxActive int     `json:"origin_max_active"`
	CapExceeded     bool    `json:"cap_exceeded"`
	OriginPerSecond []int   `json:"origin_per_second"`
	OriginFromMS    int64   `json:"origin_from_ms"`
	Draws           struct {
		Checked int      `json:"checked"`
		Lost    int      `json:"lost"`
		Undrawn int      `json:"undrawn"`
		Unread  []string `json:"unread"`
		LostIDs []string `json:"lost_ids"`
	} `json:"draws"`
	Sales *struct {
		Orders      int    `json:"orders"`
		SoldTwice   int    `json:"sold_twice"`
		InTwoOrders int    `json:"in_two_orders"`
		NotSold     int    `json:"not_sold"`
		Err         string `json:"error"`
	} `json:"sales"`
}

func secret(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestChaos runs the scenario: three replicas on a three-master Redis
// Cluster with a replica each, a crowd over them, and a replica and the
// event's master killed and restarted during the sale.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries, a Redis Cluster and a crowd")
	}
	sc := short
	if *long {
		sc = longRun
	}
	sc.Balance = *balance
	dir := t.TempDir()
	wrBin, loadBin := binary(t, "waitroom"), binary(t, "waitroom-load")
	env := []string{
		"WAITROOM_CHAOS_SIGNING_SECRET=" + secret(t), "WAITROOM_CHAOS_ADMIN_TOKEN=" + secret(t),
		"WAITROOM_CHAOS_CHALLENGE_SECRET=" + secret(t), "WAITROOM_INVENTORY_TOKEN=" + secret(t),
	}
	token := strings.TrimPrefix(env[3], "WAITROOM_INVENTORY_TOKEN=")

	cl := redistest.StartClusterWith(t, redistest.ClusterOptions{Masters: 3, Replicas: 1, NodeTimeout: 2 * time.Second, AppendOnly: true})
	// The master to kill is the one holding the event's queue (the
	// admission store's hash tag); the sidecar's tag may sit on another.
	hot := cl.MasterOf(t, "{adm:"+event+"}")
	t.Logf("the event's queue is on the Redis master %s, its seats on %s", hot.Addr, cl.MasterOf(t, "{ev:"+event+"}").Addr)

	invAddr := freeAddr(t)
	invCfg := writeTemplate(t, dir, "inventory.yaml.tmpl", "inventory.yaml", map[string]any{"Listen": invAddr, "Cluster": seeds(cl, 3)})
	startServer(t, dir, "inventory", invAddr, env, wrBin, "inventory", "-c", invCfg)
	inv := client.New("http://"+invAddr, token)
	rows := make([]inventory.Row, 0, sc.Seats/50+1)
	for left, r := sc.Seats, 1; left > 0; left, r = left-50, r+1 {
		rows = append(rows, inventory.Row{ID: strconv.Itoa(r), Seats: min(left, 50)})
	}
	if _, err := inv.PutEvent(t.Context(), event, inventory.EventDef{
		Sections: []inventory.Section{{ID: "A", PriceCents: 5000, Rows: rows}}, HoldTTLSeconds: 120,
	}, "chaos"); err != nil {
		t.Fatalf("defining the sidecar's event: %v", err)
	}

	originAddr := freeAddr(t)
	startServer(t, dir, "origin", originAddr, nil, loadBin, "origin", "-listen", originAddr, "-complete", "/shop/done")

	lead := 3 * time.Second // the replicas start meanwhile
	if *costFile != "" {
		lead += 10 * time.Second // and the idle CPU is measured
	}
	start := time.Now().Add(lead)
	onSale := start.Add(sc.PreQueue)
	var replicas []*server
	var targets []string
	for i := range 3 {
		listen, admin := freeAddr(t), freeAddr(t)
		name := fmt.Sprintf("waitroom-%d", i+1)
		cfg := writeTemplate(t, dir, "waitroom.yaml.tmpl", name+".yaml", map[string]any{
			"Name": name, "Listen": listen, "Admin": admin, "Inventory": "http://" + invAddr, "Cluster": seeds(cl, 3),
			"Origin": originAddr, "Event": event, "OpensAt": time.Now().UTC().Format(time.RFC3339),
			"OnSaleAt": onSale.UTC().Format(time.RFC3339), "MaxActive": sc.MaxActive,
			"MaxNewPerMinute": sc.MaxNewPerMinute, "PoWBits": 4, "PoWPuzzles": 4,
		})
		replicas = append(replicas, startServer(t, dir, name, listen, env, wrBin, "serve", "-c", cfg))
		targets = append(targets, "http://"+listen)
	}
	cpu := newCPUBook(t, cl, replicas)
	if *costFile != "" {
		cpu.idle(start.Add(-500 * time.Millisecond))
	}
	time.Sleep(time.Until(start))

	// The faults, on their schedule from the crowd's start.
	faults := make(chan string, 8)
	go func() {
		defer close(faults)
		if *noFaults {
			return
		}
		at := func(d time.Duration) bool {
			select {
			case <-time.After(time.Until(start.Add(d))):
				return true
			case <-t.Context().Done():
				return false
			}
		}
		if !at(sc.KillReplica) {
			return
		}
		replicas[1].kill()
		faults <- fmt.Sprintf("%.1fs: kill -9 %s", time.Since(start).Seconds(), replicas[1].name)
		if !at(sc.KillMaster) {
			return
		}
		hot.Kill()
		faults <- fmt.Sprintf("%.1fs: kill -9 the event's Redis master %s", time.Since(start).Seconds(), hot.Addr)
		promoted := cl.WaitFailover(t, hot)
		faults <- fmt.Sprintf("%.1fs: Redis promoted %s", time.Since(start).Seconds(), promoted.Addr)
		if !at(sc.Restart) {
			return
		}
		hot.Restart()
		replicas[1].start(t)
		faults <- fmt.Sprintf("%.1fs: restarted %s and the Redis node %s (now a replica)", time.Since(start).Seconds(), replicas[1].name, hot.Addr)
	}()

	cpu.begin()
	out := dir + "/report.json"
	cmd := exec.Command(loadBin, "http", "-targets", strings.Join(targets, ","), "-balance", sc.Balance, "-event", event,
		"-gate", "/shop/", "-complete", "/shop/done", "-visitors", strconv.Itoa(sc.Visitors), "-arrive", sc.Arrive.String(),
		"-think", sc.Think.String(), "-inventory", "http://"+invAddr, "-section", "A",
		"-origin-stats", "http://"+originAddr+"/_load/stats", "-max-active", strconv.Itoa(sc.MaxActive),
		"-cap-slack", strconv.Itoa(sc.slack()), "-duration", sc.Deadline.String(), "-draw-wait", "60s", "-json", out)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ctx, cancel := context.WithTimeout(t.Context(), sc.Deadline+2*time.Minute)
	defer cancel()
	go func() { <-ctx.Done(); cmd.Process.Kill() }()
	err := cmd.Run()
	for f := range faults {
		t.Log(f)
	}
	t.Logf("waitroom-load http:\n%s%s", stdout.String(), stderr.String())
	if err != nil {
		t.Fatalf("waitroom-load http: %v", err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r report
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if *noFaults { // a killed process takes its CPU time with it
		cpu.report(t, r, *costFile)
	}

	t.Logf("figures: %d joins acknowledged, %d admitted, %d bought; %.1f joins/s, %.1f polls/s, %.1f admitted/min; "+
		"longest gap in admissions %.1fs (from %.1fs); %.1f%% of %d admitted before their shown eta_high; origin max %d active vs max_active %d (+%d)",
		r.Joins, r.Admitted, r.Confirms, r.JoinsPerSec, r.PollsPerSec, r.AdmittedPerMin, float64(r.LongestGapMS)/1000,
		float64(r.LongestGapAtMS)/1000, 100*r.ETAShare, r.ETAShown, r.OriginMaxActive, sc.MaxActive, sc.slack())

	var over []string // the seconds the origin held more than the cap, from the crowd's start
	for i, n := range r.OriginPerSecond {
		if n > sc.MaxActive && len(over) < 30 {
			over = append(over, fmt.Sprintf("%ds:%d", int(r.OriginFromMS/1000)+i, n))
		}
	}
	t.Logf("seconds with more than max_active %d at the origin (from the crowd's start: most active in it): %v", sc.MaxActive, over)

	// The invariants. Durations are figures, not assertions.
	if r.Joins == 0 || r.Draws.Checked == 0 {
		t.Fatalf("no join was acknowledged: nothing was tested")
	}
	if r.Draws.Lost != 0 || len(r.Draws.Unread) != 0 || r.Draws.Undrawn != 0 {
		t.Errorf("acknowledged joins lost: %d of %d (%v); %d in tranches never drawn; audits not read: %v",
			r.Draws.Lost, r.Draws.Checked, r.Draws.LostIDs, r.Draws.Undrawn, r.Draws.Unread)
	}
	if r.Sales == nil || r.Sales.Err != "" {
		t.Errorf("the sidecar's audit was not checked: %+v", r.Sales)
	} else if n := r.Sales.SoldTwice + r.Sales.InTwoOrders; n != 0 || r.Sales.NotSold != 0 {
		t.Errorf("seats sold twice: %d; seats of acknowledged orders not sold: %d", n, r.Sales.NotSold)
	}
	if r.OriginMaxActive < 0 || r.CapExceeded {
		t.Errorf("the cap was exceeded: %d visitors active at the origin at once, max_active %d + one tick's admissions %d",
			r.OriginMaxActive, sc.MaxActive, sc.slack())
	}
}
