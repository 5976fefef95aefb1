package chaos

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/testkit/freeport"
	"github.com/waitroom/waitroom/internal/testkit/proctest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// binaries builds waitroom and waitroom-load once per test run.
var binaries = sync.OnceValues(func() (map[string]string, error) {
	dir, err := os.MkdirTemp("", "waitroom-chaos-bin-")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, name := range []string{"waitroom", "waitroom-load"} {
		bin := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", bin, "github.com/waitroom/waitroom/cmd/"+name)
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %v\n%s", name, err, b)
		}
		out[name] = bin
	}
	return out, nil
})

func binary(t *testing.T, name string) string {
	t.Helper()
	bins, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	return bins[name]
}

// cluster is a Redis Cluster of masters with one replica each.
type cluster struct {
	masters, replicas []*redistest.Server
}

// startCluster starts n masters splitting the slots and one replica of
// each, persistent as the stores want them (appendonly, fsync always),
// and waits until every replica is in sync.
func startCluster(t *testing.T, n int) *cluster {
	t.Helper()
	c := &cluster{}
	ctx := context.Background()
	for range 2 * n {
		s := redistest.Start(t, redistest.Options{Cluster: true, AppendOnly: true})
		if len(c.masters) < n {
			c.masters = append(c.masters, s)
		} else {
			c.replicas = append(c.replicas, s)
		}
	}
	per := 16384 / n
	seedHost, seedPort, _ := net.SplitHostPort(c.masters[0].Addr)
	for i, s := range append(append([]*redistest.Server{}, c.masters...), c.replicas...) {
		cl := redis.NewClient(&redis.Options{Addr: s.Addr})
		if i < n {
			lo, hi := i*per, (i+1)*per-1
			if i == n-1 {
				hi = 16383
			}
			if err := cl.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
				t.Fatalf("CLUSTER ADDSLOTSRANGE: %v", err)
			}
		}
		if i > 0 {
			if err := cl.ClusterMeet(ctx, seedHost, seedPort).Err(); err != nil {
				t.Fatalf("CLUSTER MEET: %v", err)
			}
		}
		cl.Close()
	}
	deadline := time.Now().Add(30 * time.Second)
	for i, r := range c.replicas {
		id := nodeID(t, c.masters[i])
		cl := redis.NewClient(&redis.Options{Addr: r.Addr})
		for {
			// The replica must know the master before it can follow it.
			err := cl.Do(ctx, "CLUSTER", "REPLICATE", id).Err()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("CLUSTER REPLICATE on %s: %v", r.Addr, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		for {
			info, _ := cl.Info(ctx, "replication").Result()
			if strings.Contains(info, "master_link_status:up") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica %s did not sync: %s", r.Addr, info)
			}
			time.Sleep(100 * time.Millisecond)
		}
		cl.Close()
	}
	for _, s := range c.masters {
		cl := redis.NewClient(&redis.Options{Addr: s.Addr})
		for {
			info, err := cl.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", 2*n)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster did not become ok: %v %s", err, info)
			}
			time.Sleep(100 * time.Millisecond)
		}
		cl.Close()
	}
	return c
}

func nodeID(t *testing.T, s *redistest.Server) string {
	t.Helper()
	cl := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer cl.Close()
	id, err := cl.Do(context.Background(), "CLUSTER", "MYID").Text()
	if err != nil {
		t.Fatalf("CLUSTER MYID: %v", err)
	}
	return id
}

// seeds lists the masters' addresses for a configuration.
func (c *cluster) seeds() string {
	var out []string
	for _, s := range c.masters {
		out = append(out, s.Addr)
	}
	return strings.Join(out, ", ")
}

// masterOf returns the index of the master holding key's slot, as the
// cluster was set up.
func (c *cluster) masterOf(t *testing.T, key string) int {
	t.Helper()
	cl := redis.NewClient(&redis.Options{Addr: c.masters[0].Addr})
	defer cl.Close()
	slot, err := cl.ClusterKeySlot(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return min(int(slot)/(16384/len(c.masters)), len(c.masters)-1)
}

// server is a process of ours on a fixed address: a waitroom replica,
// the sidecar or the origin, started again on the same address after a
// kill.
type server struct {
	name, addr string
	args       []string
	env        []string
	log        *os.File
	proc       *proctest.Proc
}

// startServer writes nothing; it runs bin args with env, its output
// appended to a log file in dir, and waits until addr accepts.
func startServer(t *testing.T, dir, name, addr string, env []string, bin string, args ...string) *server {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	s := &server{name: name, addr: addr, args: append([]string{bin}, args...), env: env, log: f}
	s.start(t)
	t.Cleanup(func() {
		if s.proc != nil {
			s.proc.Stop(syscall.SIGTERM, 10*time.Second)
		}
		f.Close()
	})
	return s
}

func (s *server) start(t *testing.T) {
	t.Helper()
	var err error
	for range 50 { // a killed process's port may linger a moment
		cmd := exec.Command(s.args[0], s.args[1:]...)
		cmd.Env = append(os.Environ(), s.env...)
		cmd.Stdout, cmd.Stderr = s.log, s.log
		s.proc, err = proctest.Start(cmd, proctest.Wait{Name: s.name, Addr: s.addr, Timeout: 20 * time.Second,
			Log: func() string { return proctest.LogTail(s.log.Name(), 5) }})
		if err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal(err)
}

// kill is kill -9 of the process group.
func (s *server) kill() {
	s.proc.Kill()
	s.proc = nil
}

// freeAddr is a loopback address free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	port, err := freeport.Get()
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// writeTemplate renders the template file name with data into dir.
func writeTemplate(t *testing.T, dir, name, out string, data any) string {
	t.Helper()
	tmpl, err := template.ParseFiles(name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, out)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := tmpl.Execute(f, data); err != nil {
		t.Fatal(err)
	}
	return path
}
