package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/bench/internal/cleanup"
	"github.com/waitroom/waitroom/bench/internal/procstat"
	"github.com/waitroom/waitroom/bench/internal/stats"
	"github.com/waitroom/waitroom/internal/testkit/freeport"
	"github.com/waitroom/waitroom/internal/testkit/proctest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
)

var (
	wrBin   = flag.String("bin", "", "the waitroom binary (default: built from ./cmd/waitroom)")
	loadBin = flag.String("load-bin", "", "the waitroom-load binary (default: built from ./cmd/waitroom-load)")
	joins   = flag.Int("joins", 3000, "visitors in the joins phase")
	pollers = flag.Int("pollers", 2000, "visitors in the polls phase")
	polls   = flag.Int("polls", 10, "polls each of them sends")
	buyers  = flag.Int("buyers", 400, "visitors in the purchase phase")
	pages   = flag.Int("pages", 40, "gated pages each buyer asks for")
	idleFor = flag.Duration("idle", 10*time.Second, "how long the idle baseline is measured")
	out     = flag.String("out", "", "also write the costs as JSON to this file")
	rounds  = flag.Int("rounds", 3, "measure this many times; the costs are the medians")
	fsync   = flag.String("appendfsync", "always", "Redis's appendfsync: always (what the stores ask for) or everysec (to see what the fsyncs cost)")
)

// proc is a process of the measurement, in a process group of its own.
type proc struct {
	name string
	pgid int
	stop func()
}

// cpu is the CPU time its group has used so far.
func (p proc) cpu() time.Duration { return procstat.GroupCPU(p.pgid) }

func main() {
	flag.Parse()
	log.SetFlags(0)
	cleanup.StopOnSignal()
	tmp, err := os.MkdirTemp("", "waitroom-capacity-")
	if err != nil {
		cleanup.Fatal(err)
	}
	cleanup.AtExit(func() { os.RemoveAll(tmp) })
	if *wrBin == "" {
		*wrBin = build(tmp, "waitroom")
	}
	if *loadBin == "" {
		*loadBin = build(tmp, "waitroom-load")
	}
	secret := func() string { return rand.Text() + rand.Text() }
	token := secret()
	env := []string{"WAITROOM_CAP_SIGNING_SECRET=" + secret(), "WAITROOM_CAP_ADMIN_TOKEN=" + secret(),
		"WAITROOM_CAP_CHALLENGE_SECRET=" + secret(), "WAITROOM_INVENTORY_TOKEN=" + token}

	if err := os.Mkdir(filepath.Join(tmp, "redis"), 0o700); err != nil {
		cleanup.Fatal(err)
	}
	rs, err := redistest.Launch(redistest.Options{AppendOnly: true, Dir: filepath.Join(tmp, "redis")})
	if err != nil {
		cleanup.Fatal(err)
	}
	cleanup.AtExit(rs.Stop)
	if *fsync != "always" {
		c := redis.NewClient(&redis.Options{Addr: rs.Addr})
		if err := c.ConfigSet(context.Background(), "appendfsync", *fsync).Err(); err != nil {
			cleanup.Fatalf("CONFIG SET appendfsync %s: %v", *fsync, err)
		}
		c.Close()
	}
	rpid := redisPID(rs.Addr)
	redisProc := proc{name: "redis", pgid: rpid}

	invAddr, originAddr, listen, admin := freeAddr(), freeAddr(), freeAddr(), freeAddr()
	sidecar := start(tmp, "inventory", invAddr, env, *wrBin, "inventory", "--listen", invAddr, "--redis", rs.URL())
	origin := start(tmp, "origin", originAddr, nil, *loadBin, "origin", "-listen", originAddr)
	defineSeats(env, invAddr, *buyers**rounds+100)
	cfg := filepath.Join(tmp, "waitroom.yaml")
	writeConfig(cfg, map[string]any{"Listen": listen, "Admin": admin, "Redis": rs.URL(), "Inventory": "http://" + invAddr,
		"Origin": originAddr, "OnSaleAt": time.Now().UTC().Format(time.RFC3339)})
	wr := start(tmp, "waitroom", listen, env, *wrBin, "serve", "-c", cfg)
	procs := []proc{wr, redisProc, sidecar}
	time.Sleep(3 * time.Second) // the replica settles: leases, the first ticks

	fmt.Printf("capacity: per-operation CPU on this machine (%d CPUs, load %s); Redis appendfsync %s\n", numCPU(), procstat.LoadAvg(), *fsync)
	base := measure(procs, func() { time.Sleep(*idleFor) })
	idle := perSecond(base)
	fmt.Printf("idle: waitroom %.1f ms/s, redis %.1f ms/s, sidecar %.1f ms/s\n", idle[0]*1e3, idle[1]*1e3, idle[2]*1e3)

	target := "http://" + listen
	run := func(name string, args ...string) (delta, report) {
		var r report
		d := measure(procs, func() { r = loadRun(tmp, env, name, append([]string{"-targets", target}, args...)) })
		for i := range d.cpu {
			d.cpu[i] -= time.Duration(idle[i] * d.wall.Seconds() * float64(time.Second)) // the background: ticks, leases, refreshes
		}
		return d, r
	}

	var all []round
	for i := range *rounds {
		all = append(all, measureRound(run, invAddr, i))
	}
	med := func(pick func(round) cost) cost {
		var w, r, sc []float64
		for _, x := range all {
			c := pick(x)
			w, r, sc = append(w, c.waitroom), append(r, c.redis), append(sc, c.sidecar)
		}
		return cost{stats.Median(w), stats.Median(r), stats.Median(sc)}
	}
	join := med(func(x round) cost { return x.join })
	poll := med(func(x round) cost { return x.poll })
	gated := med(func(x round) cost { return x.gated })
	hold := med(func(x round) cost { return x.hold })
	last := all[len(all)-1]
	rj, rp, rb, gatedN := last.rj, last.rp, last.rb, last.gatedN
	dj, dp, db := last.dj, last.dp, last.db
	if *rounds > 1 {
		fmt.Printf("medians of %d rounds; each round's figures:\n", *rounds)
		for i, x := range all {
			fmt.Printf("  round %d: join %.0f/%.0f µs, poll %.1f/%.1f µs, gated %.1f µs, purchase %.0f/%.0f µs (waitroom/redis, redis/sidecar)\n",
				i+1, x.join.waitroom*1e6, x.join.redis*1e6, x.poll.waitroom*1e6, x.poll.redis*1e6, x.gated.waitroom*1e6,
				x.hold.redis*1e6, x.hold.sidecar*1e6)
		}
	}
	fmt.Println()
	fmt.Println("operation                         count   waitroom µs   redis µs   sidecar µs")
	row := func(name string, n int64, c cost) {
		fmt.Printf("%-32s %6d   %11.1f   %8.1f   %10.1f\n", name, n, c.waitroom*1e6, c.redis*1e6, c.sidecar*1e6)
	}
	row("join (challenge + PoW + join)", rj.Joins, join)
	row("status poll", rp.Polls, poll)
	row("gated request (pass + proxy)", int64(gatedN), gated)
	row("purchase (hold + confirm)", rb.Confirms, hold)
	fmt.Printf("\nphases: joins %.1fs (%d joins), polls %.1fs (%d joins, %d polls), buy %.1fs (%d joins, %d polls, %d pages, %d purchases)\n",
		dj.wall.Seconds(), rj.Joins, dp.wall.Seconds(), rp.Joins, rp.Polls, db.wall.Seconds(), rb.Joins, rb.Polls, int64(gatedN), rb.Confirms)
	fmt.Printf("\nRedis's own time by command over all rounds (INFO commandstats; the rest of its CPU is the network and the AOF):\n%s",
		commandStats(rs.Addr))
	if *out != "" {
		b, _ := json.MarshalIndent(map[string]any{
			"join": join.json(), "poll": poll.json(), "gated": gated.json(), "purchase": hold.json(),
			"idle_per_s": map[string]float64{"waitroom": idle[0], "redis": idle[1], "sidecar": idle[2]},
		}, "", "  ")
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
			cleanup.Fatal(err)
		}
	}
	wr.stop()
	sidecar.stop()
	origin.stop()
	rs.Stop()
	os.RemoveAll(tmp)
}

// round is one measurement of the three phases.
type round struct {
	join, poll, gated, hold cost
	rj, rp, rb              report
	dj, dp, db              delta
	gatedN                  float64
}

// measureRound runs the three phases once.
func measureRound(run func(string, ...string) (delta, report), invAddr string, i int) round {
	var x round
	// 1. Joins: a challenge fetched and its proof of work checked, the
	// join, and the draw of its tranche.
	x.dj, x.rj = run(fmt.Sprintf("joins-%d", i), "-event", "wait", "-gate", "/wait/", "-visitors", strconv.Itoa(*joins), "-arrive", "10s", "-join-only", "-draw-wait", "0s")
	x.join = costs(x.dj, float64(x.rj.Joins))
	x.join.sidecar = 0 // the sidecar serves none of it: what is left is noise
	// 2. Polls: visitors join, then poll every second, never admitted.
	x.dp, x.rp = run(fmt.Sprintf("polls-%d", i), "-event", "wait", "-gate", "/wait/", "-visitors", strconv.Itoa(*pollers), "-arrive", "5s", "-polls", strconv.Itoa(*polls),
		"-max-poll", "1s", "-draw-wait", "0s")
	x.poll = costs(subtract(x.dp, x.join, float64(x.rp.Joins)), float64(x.rp.Polls))
	x.poll.sidecar = 0
	// 3. Gated pages and purchases: visitors join, poll until admitted,
	// ask for pages, hold and confirm a seat through the sidecar, done.
	x.db, x.rb = run(fmt.Sprintf("buy-%d", i), "-event", "buy", "-visitors", strconv.Itoa(*buyers), "-arrive", "5s", "-pages", strconv.Itoa(*pages),
		"-think", "0", "-inventory", "http://"+invAddr, "-inventory-event", "seats", "-section", "A", "-draw-wait", "10s")
	rest := subtract(subtract(x.db, x.join, float64(x.rb.Joins)), x.poll, float64(x.rb.Polls))
	x.gatedN = float64(x.rb.OriginPages + x.rb.Completes)
	// Gated requests cost Redis and the sidecar nothing: what the buy
	// phase cost them beyond its joins and polls is the purchases'.
	x.gated = cost{waitroom: rest.cpu[0].Seconds() / x.gatedN}
	x.hold = cost{redis: rest.cpu[1].Seconds() / float64(x.rb.Confirms), sidecar: rest.cpu[2].Seconds() / float64(x.rb.Confirms)}
	return x
}

// delta is CPU used per process (waitroom, redis, sidecar) over a wall time.
type delta struct {
	cpu  [3]time.Duration
	wall time.Duration
}

func measure(procs []proc, f func()) delta {
	var d delta
	var before [3]time.Duration
	for i, p := range procs {
		before[i] = p.cpu()
	}
	t := time.Now()
	f()
	d.wall = time.Since(t)
	for i, p := range procs {
		d.cpu[i] = p.cpu() - before[i]
	}
	return d
}

func perSecond(d delta) [3]float64 {
	var out [3]float64
	for i := range d.cpu {
		out[i] = d.cpu[i].Seconds() / d.wall.Seconds()
	}
	return out
}

// cost is the CPU seconds one operation costs each process.
type cost struct{ waitroom, redis, sidecar float64 }

func (c cost) json() map[string]float64 {
	return map[string]float64{"waitroom_us": c.waitroom * 1e6, "redis_us": c.redis * 1e6, "sidecar_us": c.sidecar * 1e6}
}

func costs(d delta, n float64) cost {
	if n == 0 {
		cleanup.Fatalf("a phase made no operations")
	}
	return cost{d.cpu[0].Seconds() / n, d.cpu[1].Seconds() / n, d.cpu[2].Seconds() / n}
}

// subtract takes n operations of cost c off d.
func subtract(d delta, c cost, n float64) delta {
	d.cpu[0] -= time.Duration(c.waitroom * n * float64(time.Second))
	d.cpu[1] -= time.Duration(c.redis * n * float64(time.Second))
	d.cpu[2] -= time.Duration(c.sidecar * n * float64(time.Second))
	return d
}

// report is the part of waitroom-load http -json read here.
type report struct {
	Joins       int64 `json:"joins"`
	Polls       int64 `json:"polls"`
	OriginPages int64 `json:"origin_pages"`
	Completes   int64 `json:"completes"`
	Confirms    int64 `json:"confirms"`
	GaveUp      int64 `json:"gave_up"`
}

// loadRun runs waitroom-load http with args and reads its report.
func loadRun(tmp string, env []string, name string, args []string) report {
	path := filepath.Join(tmp, name+".json")
	cmd := exec.Command(*loadBin, append([]string{"http", "-json", path}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		cleanup.Fatalf("waitroom-load http (%s): %v\n%s", name, err, b)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		cleanup.Fatal(err)
	}
	var r report
	if err := json.Unmarshal(raw, &r); err != nil {
		cleanup.Fatal(err)
	}
	if r.GaveUp > 0 {
		cleanup.Fatalf("%s: %d visitors gave up:\n%s", name, r.GaveUp, b)
	}
	return r
}

func build(tmp, name string) string {
	bin := filepath.Join(tmp, name)
	if b, err := exec.Command("go", "build", "-o", bin, "github.com/waitroom/waitroom/cmd/"+name).CombinedOutput(); err != nil {
		cleanup.Fatalf("go build %s: %v\n%s", name, err, b)
	}
	return bin
}

// start runs a server in its own process group, its output in a log in
// tmp, and waits until addr accepts.
func start(tmp, name, addr string, env []string, bin string, args ...string) proc {
	logPath := filepath.Join(tmp, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		cleanup.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	p, err := proctest.Start(cmd, proctest.Wait{Name: name, Addr: addr, Timeout: 20 * time.Second,
		Log: func() string { return proctest.LogTail(logPath, 5) }})
	if err != nil {
		cleanup.Fatal(err)
	}
	stop := func() { p.Stop(syscall.SIGTERM, 10*time.Second) }
	cleanup.AtExit(stop)
	return proc{name: name, pgid: p.Pid(), stop: stop}
}

// redisPID asks the server its process id (its group: redistest starts
// it in a group of its own).
func redisPID(addr string) int {
	info, err := redistest.Info(addr, "server")
	if err != nil {
		cleanup.Fatal(err)
	}
	pid, err := strconv.Atoi(info["process_id"])
	if err != nil {
		cleanup.Fatalf("INFO server of %s: process_id %q", addr, info["process_id"])
	}
	return pid
}

// commandStats lists Redis's commands by the time spent in them, most
// first, with calls and µs per call.
func commandStats(addr string) string {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		return "  (" + err.Error() + ")\n"
	}
	type stat struct {
		name          string
		calls         int64
		usec, perCall float64
	}
	var all []stat
	for line := range strings.Lines(info) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		st := stat{name: strings.TrimPrefix(name, "cmdstat_")}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				st.calls = int64(f)
			case "usec":
				st.usec = f
			case "usec_per_call":
				st.perCall = f
			}
		}
		all = append(all, st)
	}
	slices.SortFunc(all, func(a, b stat) int { return cmp.Compare(b.usec, a.usec) })
	var b strings.Builder
	for _, st := range all[:min(len(all), 8)] {
		fmt.Fprintf(&b, "  %-14s %8d calls %10.0f µs  %7.1f µs/call\n", st.name, st.calls, st.usec, st.perCall)
	}
	return b.String()
}

// defineSeats defines the sidecar's event: n seats in section A.
func defineSeats(env []string, invAddr string, n int) {
	var rows []inventory.Row
	for r := 1; n > 0; r, n = r+1, n-50 {
		rows = append(rows, inventory.Row{ID: strconv.Itoa(r), Seats: min(n, 50)})
	}
	c := client.New("http://"+invAddr, strings.TrimPrefix(env[3], "WAITROOM_INVENTORY_TOKEN="))
	defer c.Close()
	if _, err := c.PutEvent(context.Background(), "seats", inventory.EventDef{
		Sections: []inventory.Section{{ID: "A", PriceCents: 5000, Rows: rows}}, HoldTTLSeconds: 300}, "capacity"); err != nil {
		cleanup.Fatalf("defining the seats: %v", err)
	}
}

func writeConfig(path string, data map[string]any) {
	tmpl := template.Must(template.ParseFiles(filepath.Join("bench", "capacity", "waitroom.yaml.tmpl")))
	f, err := os.Create(path)
	if err != nil {
		cleanup.Fatal(err)
	}
	defer f.Close()
	if err := tmpl.Execute(f, data); err != nil {
		cleanup.Fatal(err)
	}
}

func freeAddr() string {
	port, err := freeport.Get()
	if err != nil {
		cleanup.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}
