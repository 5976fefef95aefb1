package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// failoverWait bounds every wait of this file: a start, a sync, a
// failover. Redis fails over in a few seconds with the timeouts used
// here; a wait that takes this long is a broken set-up, not a slow one.
const failoverWait = 60 * time.Second

// Replicated is a standalone master with replicas (REPLICAOF), the shape
// a Sentinel watches. Master is the node that is master now: Sentinels'
// WaitFailover moves it to the promoted replica. Not safe for
// concurrent use.
type Replicated struct {
	Master   *Server
	Replicas []*Server
}

// StartReplicated starts a master and n replicas of it with opts (each
// in its own directory; opts.Dir and opts.Port are ignored) and waits
// until every replica is in sync. All are stopped when the test ends.
func StartReplicated(tb testing.TB, n int, opts Options) *Replicated {
	tb.Helper()
	opts.Dir, opts.Port = "", 0
	r := &Replicated{Master: Start(tb, opts)}
	opts.ReplicaOf = r.Master.Addr
	for range n {
		r.Replicas = append(r.Replicas, Start(tb, opts))
	}
	r.WaitInSync(tb)
	return r
}

// Nodes lists the master and the replicas.
func (r *Replicated) Nodes() []*Server { return append([]*Server{r.Master}, r.Replicas...) }

// WaitInSync waits until every running replica replicates from the
// master with its link up and has applied everything the master has
// written (their offsets are equal).
func (r *Replicated) WaitInSync(tb testing.TB) {
	tb.Helper()
	var live []*Server
	for _, s := range r.Replicas {
		if s.Running() {
			live = append(live, s)
		}
	}
	waitInSync(tb, r.Master, live)
}

// waitInSync waits until each of replicas replicates from master, link
// up, at master's replication offset.
func waitInSync(tb testing.TB, master *Server, replicas []*Server) {
	tb.Helper()
	waitUntil(tb, "replicas in sync with "+master.Addr, func() (bool, string) {
		m, err := Info(master.Addr, "replication")
		if err != nil {
			return false, err.Error()
		}
		if m["role"] != "master" {
			return false, master.Addr + " is " + m["role"]
		}
		offset := m["master_repl_offset"]
		for _, s := range replicas {
			ri, err := Info(s.Addr, "replication")
			if err != nil {
				return false, err.Error()
			}
			if ri["role"] != "slave" || net.JoinHostPort(ri["master_host"], ri["master_port"]) != master.Addr ||
				ri["master_link_status"] != "up" {
				return false, fmt.Sprintf("%s: role %s of %s:%s, link %s", s.Addr, ri["role"], ri["master_host"], ri["master_port"], ri["master_link_status"])
			}
			if ri["slave_repl_offset"] != offset {
				return false, fmt.Sprintf("%s at offset %s, master at %s", s.Addr, ri["slave_repl_offset"], offset)
			}
		}
		return true, ""
	})
}

// Sentinels is a group of Sentinels (redis-server --sentinel) watching
// one Replicated under the master name Name. They judge a master down
// after one silent second and may retry a failover after three, so a
// failover takes a few seconds. Not safe for concurrent use.
type Sentinels struct {
	Name  string
	Nodes []*Server
	group *Replicated
}

// sentinelConf is what a Sentinel's configuration file says.
type sentinelConf struct {
	name          string
	master        string
	quorum        int
	downAfter     time.Duration
	failoverAfter time.Duration
}

// write writes the Sentinel's configuration file into dir (a Sentinel
// rewrites it as it learns) and returns its path.
func (c *sentinelConf) write(dir string, port int) (string, error) {
	host, mport, err := net.SplitHostPort(c.master)
	if err != nil {
		return "", err
	}
	conf := fmt.Sprintf(`port %d
bind 127.0.0.1
protected-mode no
daemonize no
dir %s
logfile %s
sentinel monitor %s %s %s %d
sentinel down-after-milliseconds %s %d
sentinel failover-timeout %s %d
sentinel parallel-syncs %s 1
`, port, dir, filepath.Join(dir, "redis.log"), c.name, host, mport, c.quorum,
		c.name, c.downAfter.Milliseconds(), c.name, c.failoverAfter.Milliseconds(), c.name)
	path := filepath.Join(dir, "sentinel.conf")
	return path, os.WriteFile(path, []byte(conf), 0o600)
}

// StartSentinels starts n Sentinels (a majority is the quorum) watching
// r as master name "waitroom", and waits until each knows the master,
// every replica and the other Sentinels: only then can they agree on a
// failover. They are stopped when the test ends.
func StartSentinels(tb testing.TB, r *Replicated, n int) *Sentinels {
	tb.Helper()
	g := &Sentinels{Name: "waitroom", group: r}
	for range n {
		g.Nodes = append(g.Nodes, Start(tb, Options{sentinel: &sentinelConf{
			name: g.Name, master: r.Master.Addr, quorum: n/2 + 1,
			downAfter: time.Second, failoverAfter: 3 * time.Second,
		}}))
	}
	ctx := context.Background()
	for _, s := range g.Nodes {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
		waitUntil(tb, "Sentinel "+s.Addr+" to see the group", func() (bool, string) {
			replicas, err := c.Replicas(ctx, g.Name).Result()
			if err != nil {
				return false, err.Error()
			}
			others, err := c.Sentinels(ctx, g.Name).Result()
			if err != nil {
				return false, err.Error()
			}
			return len(replicas) == len(r.Replicas) && len(others) == n-1,
				fmt.Sprintf("%d replicas, %d other Sentinels", len(replicas), len(others))
		})
		c.Close()
	}
	return g
}

// Addrs lists the Sentinels' addresses.
func (g *Sentinels) Addrs() []string { return addrs(g.Nodes) }

// WaitFailover waits, after old (the master) was killed, until every
// running Sentinel names the same new master, that node says it is a
// master, and the other running replicas replicate from it in sync. It
// makes the new master the group's Master (old becomes a replica: a
// Sentinel turns it into one 10-20 s after it is restarted) and returns
// it.
func (g *Sentinels) WaitFailover(tb testing.TB, old *Server) *Server {
	tb.Helper()
	ctx := context.Background()
	var promoted *Server
	waitUntil(tb, "a Sentinel failover away from "+old.Addr, func() (bool, string) {
		named := ""
		for _, s := range g.Nodes {
			if !s.Running() {
				continue
			}
			c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
			addr, err := c.GetMasterAddrByName(ctx, g.Name).Result()
			c.Close()
			if err != nil {
				return false, err.Error()
			}
			a := net.JoinHostPort(addr[0], addr[1])
			if a == old.Addr || (named != "" && a != named) {
				return false, s.Addr + " names " + a
			}
			named = a
		}
		promoted = nil
		for _, s := range g.group.Nodes() {
			if s.Addr == named {
				promoted = s
			}
		}
		if promoted == nil {
			return false, "the Sentinels name " + named + ", not a node of the group"
		}
		m, err := Info(named, "replication")
		if err != nil || m["role"] != "master" {
			return false, fmt.Sprintf("%s: role %q %v", named, m["role"], err)
		}
		return true, ""
	})
	replicas := []*Server{}
	for _, s := range g.group.Nodes() {
		if s != promoted {
			replicas = append(replicas, s)
		}
	}
	g.group.Master, g.group.Replicas = promoted, replicas
	g.group.WaitInSync(tb)
	return promoted
}

// ClusterOptions shape a Redis Cluster.
type ClusterOptions struct {
	// Masters is the number of masters; the slots are split evenly.
	Masters int
	// Replicas is the number of replicas of each master.
	Replicas int
	// NodeTimeout is cluster-node-timeout; 0 is 5 s. With 1–2 s a
	// killed master's replica takes over within a few seconds.
	NodeTimeout time.Duration
	// AppendOnly runs every node with the AOF (Options.AppendOnly).
	AppendOnly bool
}

// StartClusterWith starts a cluster shaped by o, waits until every node
// reports cluster_state:ok and every replica is in sync with its master.
// Cluster.Nodes lists the masters first, then the replicas (of master 0,
// 1, …, in order). Nodes are stopped when the test ends.
func StartClusterWith(tb testing.TB, o ClusterOptions) *Cluster {
	tb.Helper()
	c := &Cluster{}
	node := Options{Cluster: true, NodeTimeout: o.NodeTimeout, AppendOnly: o.AppendOnly}
	for range o.Masters * (1 + o.Replicas) {
		c.Nodes = append(c.Nodes, Start(tb, node))
	}
	ctx := context.Background()
	host, port, _ := net.SplitHostPort(c.Nodes[0].Addr)
	per := 16384 / o.Masters
	for i, s := range c.Nodes {
		cl := redis.NewClient(&redis.Options{Addr: s.Addr})
		if i < o.Masters {
			lo, hi := i*per, (i+1)*per-1
			if i == o.Masters-1 {
				hi = 16383
			}
			if err := cl.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
				tb.Fatalf("CLUSTER ADDSLOTSRANGE: %v", err)
			}
		}
		if i > 0 {
			if err := cl.ClusterMeet(ctx, host, port).Err(); err != nil {
				tb.Fatalf("CLUSTER MEET: %v", err)
			}
		}
		cl.Close()
	}
	c.waitOK(tb, len(c.Nodes))
	for i, s := range c.Nodes[o.Masters:] {
		master := c.Nodes[i/o.Replicas]
		id := c.ID(tb, master)
		cl := redis.NewClient(&redis.Options{Addr: s.Addr})
		// A node learns the master's id by gossip; until then REPLICATE
		// answers "Unknown node".
		waitUntil(tb, s.Addr+" to replicate "+master.Addr, func() (bool, string) {
			err := cl.ClusterReplicate(ctx, id).Err()
			return err == nil, fmt.Sprint(err)
		})
		cl.Close()
	}
	for i, m := range c.Nodes[:o.Masters] {
		waitInSync(tb, m, c.Nodes[o.Masters+i*o.Replicas:o.Masters+(i+1)*o.Replicas])
	}
	c.waitOK(tb, len(c.Nodes))
	return c
}

// waitOK waits until every running node reports cluster_state:ok and
// knows known nodes.
func (c *Cluster) waitOK(tb testing.TB, known int) {
	tb.Helper()
	ctx := context.Background()
	for _, s := range c.Nodes {
		if !s.Running() {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: s.Addr})
		waitUntil(tb, "cluster_state:ok on "+s.Addr, func() (bool, string) {
			info, err := cl.ClusterInfo(ctx).Result()
			return err == nil && strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d\r", known)), fmt.Sprint(err, info)
		})
		cl.Close()
	}
}

// ID returns a node's cluster node id.
func (c *Cluster) ID(tb testing.TB, s *Server) string {
	tb.Helper()
	cl := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer cl.Close()
	id, err := cl.ClusterMyID(context.Background()).Result()
	if err != nil {
		tb.Fatalf("CLUSTER MYID of %s: %v", s.Addr, err)
	}
	return id
}

// MasterOf returns the node that serves key's slot now, as the running
// nodes see it.
func (c *Cluster) MasterOf(tb testing.TB, key string) *Server {
	tb.Helper()
	ctx := context.Background()
	for _, s := range c.Nodes {
		if !s.Running() {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: s.Addr})
		slot, err := cl.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			cl.Close()
			tb.Fatalf("CLUSTER KEYSLOT: %v", err)
		}
		shards, err := cl.ClusterShards(ctx).Result()
		cl.Close()
		if err != nil {
			tb.Fatalf("CLUSTER SHARDS: %v", err)
		}
		for _, sh := range shards {
			if m := shardMaster(sh); m != "" && serves(sh, slot) {
				return c.byAddr(tb, m)
			}
		}
		tb.Fatalf("no node serves slot %d", slot)
	}
	tb.Fatal("no cluster node is running")
	return nil
}

// ReplicasOf returns the running nodes that replicate master now.
func (c *Cluster) ReplicasOf(tb testing.TB, master *Server) []*Server {
	tb.Helper()
	var out []*Server
	for _, s := range c.Nodes {
		if !s.Running() || s == master {
			continue
		}
		m, err := Info(s.Addr, "replication")
		if err != nil {
			tb.Fatalf("INFO of %s: %v", s.Addr, err)
		}
		if m["role"] == "slave" && net.JoinHostPort(m["master_host"], m["master_port"]) == master.Addr {
			out = append(out, s)
		}
	}
	return out
}

// WaitReplicas waits until n running nodes replicate master, in sync
// with it (after a failover, a restarted old master rejoins as a replica
// of the promoted one), and returns them.
func (c *Cluster) WaitReplicas(tb testing.TB, master *Server, n int) []*Server {
	tb.Helper()
	var replicas []*Server
	waitUntil(tb, fmt.Sprintf("%d replicas of %s", n, master.Addr), func() (bool, string) {
		replicas = c.ReplicasOf(tb, master)
		return len(replicas) >= n, fmt.Sprintf("%d replicas", len(replicas))
	})
	waitInSync(tb, master, replicas)
	return replicas
}

func (c *Cluster) byAddr(tb testing.TB, addr string) *Server {
	tb.Helper()
	for _, s := range c.Nodes {
		if s.Addr == addr {
			return s
		}
	}
	tb.Fatalf("%s is not a node of the cluster", addr)
	return nil
}

// WaitFailover waits, after the master dead was killed, until every
// running node reports cluster_state:ok and no slot on dead, and
// returns the node that serves dead's slots now (its promoted replica).
func (c *Cluster) WaitFailover(tb testing.TB, dead *Server) *Server {
	tb.Helper()
	slot, err := firstSlot(dead.Dir)
	if err != nil {
		tb.Fatalf("redistest: the slots of %s: %v", dead.Addr, err)
	}
	if slot < 0 {
		tb.Fatalf("redistest: %s served no slot, it was no master", dead.Addr)
	}
	ctx := context.Background()
	var promoted string
	waitUntil(tb, "a cluster failover away from "+dead.Addr, func() (bool, string) {
		for _, s := range c.Nodes {
			if !s.Running() {
				continue
			}
			cl := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
			info, err := cl.ClusterInfo(ctx).Result()
			shards, err2 := cl.ClusterShards(ctx).Result()
			cl.Close()
			if err != nil || err2 != nil || !strings.Contains(info, "cluster_state:ok") {
				return false, fmt.Sprint(s.Addr, ": ", err, err2, info)
			}
			for _, sh := range shards {
				m := shardMaster(sh)
				if len(sh.Slots) > 0 && (m == "" || m == dead.Addr) {
					return false, fmt.Sprintf("%s: slots %v still on %q", s.Addr, sh.Slots, m)
				}
				if serves(sh, int64(slot)) {
					promoted = m
				}
			}
		}
		m, err := Info(promoted, "replication")
		return err == nil && m["role"] == "master", fmt.Sprintf("%s: role %q %v", promoted, m["role"], err)
	})
	return c.byAddr(tb, promoted)
}

// shardMaster returns the address of a shard's master ("" if none).
func shardMaster(sh redis.ClusterShard) string {
	for _, n := range sh.Nodes {
		if n.Role == "master" {
			return net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))
		}
	}
	return ""
}

// serves reports whether slot is one of the shard's.
func serves(sh redis.ClusterShard, slot int64) bool {
	for _, r := range sh.Slots {
		if r.Start <= slot && slot <= r.End {
			return true
		}
	}
	return false
}

// firstSlot reads the first slot a cluster node served from the
// nodes.conf in its directory (the line marked myself); -1 when it
// served none.
func firstSlot(dir string) (int, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "nodes.conf"))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(raw)) {
		f := strings.Fields(line)
		if len(f) < 8 || !strings.Contains(f[2], "myself") {
			continue
		}
		if len(f) == 8 {
			return -1, nil
		}
		lo, _, _ := strings.Cut(f[8], "-")
		return strconv.Atoi(lo)
	}
	return 0, fmt.Errorf("no myself line in %s/nodes.conf", dir)
}

// Running reports whether the server's process is up (not killed or
// stopped).
func (s *Server) Running() bool { return s.cmd != nil }

// Info returns the fields of one INFO section of the Redis at addr.
func Info(addr, section string) (map[string]string, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	raw, err := c.Info(context.Background(), section).Result()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for line := range strings.Lines(raw) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out, nil
}

// waitUntil polls cond every 50 ms until it holds, and fails the test
// with cond's last word after failoverWait.
func waitUntil(tb testing.TB, what string, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(failoverWait)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: waited %v for %s: %s", failoverWait, what, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func addrs(nodes []*Server) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, n.Addr)
	}
	return out
}
