package chaos

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/waitroom/waitroom/bench/internal/procstat"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// cpuBook charges the run's processes with the CPU time they used: the
// waitroom replicas, the Redis masters and their replicas. A process
// killed during the run takes its CPU with it, so the capacity model is
// checked on a run without faults (-chaos.nofaults).
type cpuBook struct {
	groups   map[string][]int // kind → process groups
	before   map[string]time.Duration
	idleRate map[string]float64 // CPU seconds a second before the crowd came
	wall     time.Time
}

// newCPUBook books the three replicas and the cluster's nodes (masters
// first, then their replicas, as redistest lists them).
func newCPUBook(t *testing.T, cl *redistest.Cluster, replicas []*server) *cpuBook {
	b := &cpuBook{groups: map[string][]int{}, before: map[string]time.Duration{}, idleRate: map[string]float64{}}
	for _, r := range replicas {
		b.groups["waitroom"] = append(b.groups["waitroom"], r.proc.Pid())
	}
	for i, s := range cl.Nodes {
		kind := "redis masters"
		if i >= 3 {
			kind = "redis replicas"
		}
		b.groups[kind] = append(b.groups[kind], redisPID(t, s))
	}
	return b
}

// begin starts the books.
func (b *cpuBook) begin() {
	for k := range b.groups {
		b.before[k] = b.used(k)
	}
	b.wall = time.Now()
}

// idle measures what the processes use before the crowd comes (leases,
// ticks, measurements published, the sidecar's remaining seats read, the
// cluster's gossip), until.
func (b *cpuBook) idle(until time.Time) {
	b.begin()
	time.Sleep(time.Until(until))
	wall := time.Since(b.wall).Seconds()
	for k := range b.groups {
		b.idleRate[k] = (b.used(k) - b.before[k]).Seconds() / wall
	}
}

func (b *cpuBook) used(kind string) time.Duration {
	var d time.Duration
	for _, g := range b.groups[kind] {
		d += procstat.GroupCPU(g)
	}
	return d
}

// redisPID is the server's process id (and group: redistest starts it in
// a group of its own).
func redisPID(t *testing.T, s *redistest.Server) int {
	t.Helper()
	info, err := redistest.Info(s.Addr, "server")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(info["process_id"])
	if err != nil {
		t.Fatalf("INFO server of %s: process_id %q", s.Addr, info["process_id"])
	}
	return pid
}

// costs is what go run ./bench/capacity -out writes: µs per operation.
type costs map[string]map[string]float64

// report logs the CPU each kind of process used over the run and, with
// a costs file, what the capacity model predicts from the run's
// operations: joins (every try: a challenge and its check), polls,
// gated requests (pages and done pages) and purchases.
func (b *cpuBook) report(t *testing.T, r report, costFile string) {
	wall := time.Since(b.wall)
	used := map[string]time.Duration{}
	for k := range b.groups {
		used[k] = b.used(k) - b.before[k]
		t.Logf("cpu: %s used %.2fs over %.1fs (%.0f%% of a core)", k, used[k].Seconds(), wall.Seconds(), 100*used[k].Seconds()/wall.Seconds())
	}
	if costFile == "" {
		return
	}
	raw, err := os.ReadFile(costFile)
	if err != nil {
		t.Fatal(err)
	}
	var c costs
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	n := map[string]float64{"join": float64(r.JoinTries), "poll": float64(r.Polls),
		"gated": float64(r.OriginPages + r.Completes), "purchase": float64(r.Confirms)}
	predict := func(share string) float64 {
		s := 0.0
		for op, k := range n {
			s += k * c[op][share] / 1e6
		}
		return s
	}
	for _, x := range []struct{ kind, share string }{{"waitroom", "waitroom_us"}, {"redis masters", "redis_us"}} {
		idle := b.idleRate[x.kind] * wall.Seconds()
		t.Logf("model check: %s used %.2fs: %.2fs idle (%.1f ms/s before the crowd) + %.2fs for the crowd; the costs predict %.2fs for it (%.2f×)",
			x.kind, used[x.kind].Seconds(), idle, 1000*b.idleRate[x.kind], used[x.kind].Seconds()-idle, predict(x.share),
			(used[x.kind].Seconds()-idle)/predict(x.share))
	}
	t.Logf("model check: the crowd made %d joins (tries), %d polls, %d gated requests and %d purchases; the Redis replicas used %.2fs more, which the costs (measured on a Redis without replicas) leave out",
		r.JoinTries, r.Polls, r.OriginPages+r.Completes, r.Confirms, used["redis replicas"].Seconds())
}
