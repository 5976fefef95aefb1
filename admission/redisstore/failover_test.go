package redisstore_test

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/redisstore"
	"github.com/waitroom/waitroom/internal/redisbatch"
	"github.com/waitroom/waitroom/internal/redisconn"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// failoverStore opens a store through redisconn, as waitroom serve does.
func failoverStore(t *testing.T, s redisconn.Settings) (*redisstore.Store, *redisconn.Conn) {
	t.Helper()
	conn := redisconn.New(s, nil)
	t.Cleanup(func() { conn.Close() })
	c, err := conn.Client()
	if err != nil {
		t.Fatal(err)
	}
	st, err := redisstore.New(context.Background(), redisstore.Options{Client: c,
		MinReplicasAcked: s.MinReplicasAcked, AckTimeout: s.AckTimeoutOrDefault()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, conn
}

func visitor(n uint64) admission.VisitorID {
	var v admission.VisitorID
	binary.BigEndian.PutUint64(v[:], n)
	return v
}

// joinLoad appends visitors from a few goroutines until stop, recording
// the acknowledged ones and when each call ended.
type joinLoad struct {
	next   atomic.Uint64
	mu     sync.Mutex
	acked  map[admission.VisitorID]bool
	failed int
	// starts and ends of successful calls, in order of completion
	okAt [][2]time.Time
	wg   sync.WaitGroup
	stop chan struct{}
}

func startJoins(s admission.Store, event string, workers int) *joinLoad {
	l := &joinLoad{acked: map[admission.VisitorID]bool{}, stop: make(chan struct{})}
	for range workers {
		l.wg.Go(func() {
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				v := visitor(l.next.Add(1))
				began := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				err := s.AppendMember(ctx, event, "main", 0, v)
				cancel()
				l.mu.Lock()
				if err == nil {
					l.acked[v] = true
					l.okAt = append(l.okAt, [2]time.Time{began, time.Now()})
				} else {
					l.failed++
				}
				l.mu.Unlock()
			}
		})
	}
	return l
}

func (l *joinLoad) end() {
	close(l.stop)
	l.wg.Wait()
}

// firstOKAfter is the end of the first successful join sent after t.
func (l *joinLoad) firstOKAfter(t time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, at := range l.okAt {
		if at[0].After(t) {
			return at[1]
		}
	}
	return time.Time{}
}

// TestClusterFailoverResumes kills the master of an event's slot in a
// Redis Cluster with a replica per master while joins go on: the client
// follows the promotion (it used to dial the dead master until go-redis's
// 60 s slot reload), so the first join sent after Redis finished its
// failover succeeds (the client retries at most RetryFor, 2 s here), and
// so do a seed and a draw.
func TestClusterFailoverResumes(t *testing.T) {
	cl := redistest.StartClusterWith(t, redistest.ClusterOptions{Masters: 3, Replicas: 1, NodeTimeout: time.Second})
	s, _ := failoverStore(t, redisconn.Settings{Cluster: cl.Addrs(), RetryFor: 2 * time.Second})
	ctx := context.Background()
	const event = "ev"
	load := startJoins(s, event, 4)
	for load.next.Load() < 200 {
		time.Sleep(10 * time.Millisecond)
	}
	dead := cl.MasterOf(t, "{adm:"+event+"}")
	killed := time.Now()
	dead.Kill()
	cl.WaitFailover(t, dead)
	promoted := time.Now()
	if err := s.AppendMember(ctx, event, "main", 0, visitor(1<<40)); err != nil {
		t.Fatalf("the first join after the failover: %v", err)
	}
	seed, err := s.Seed(ctx, event, "main", 0, []byte("seed"))
	if err != nil {
		t.Fatalf("the first seed after the failover: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	load.end()
	members, err := s.Members(ctx, event, "main", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RecordDraw(ctx, event, "main", admission.Draw{Tranche: 0, First: 1, Count: uint64(len(members)), Seed: seed}); err != nil {
		t.Fatalf("the first draw after the failover: %v", err)
	}
	first := load.firstOKAfter(killed)
	t.Logf("Redis failed over in %v; the first join sent after the kill succeeded %v after the failover ended; %d joins acknowledged, %d failed",
		promoted.Sub(killed).Round(time.Millisecond), first.Sub(promoted).Round(time.Millisecond), len(load.acked), load.failed)
	if first.IsZero() {
		t.Fatal("no join succeeded after the kill")
	}
}

// TestAckedJoinsSurviveFailover: with MinReplicasAcked 1, every join the
// store acknowledged is on the promoted replica after the master is
// killed right after a burst of joins, and so is a seed and a draw.
func TestAckedJoinsSurviveFailover(t *testing.T) {
	cl := redistest.StartClusterWith(t, redistest.ClusterOptions{Masters: 3, Replicas: 1, NodeTimeout: time.Second})
	s, _ := failoverStore(t, redisconn.Settings{Cluster: cl.Addrs(), MinReplicasAcked: 1})
	ctx := context.Background()
	const event = "ev"
	seed, err := s.Seed(ctx, event, "main", 0, []byte("seed"))
	if err != nil {
		t.Fatal(err)
	}
	d := admission.Draw{Tranche: 0, First: 1, Count: 0, Seed: seed, At: time.Unix(1700000000, 0)}
	if err := s.RecordDraw(ctx, event, "main", d); err != nil {
		t.Fatal(err)
	}
	load := startJoins(s, event, 8)
	for load.next.Load() < 2000 {
		time.Sleep(5 * time.Millisecond)
	}
	dead := cl.MasterOf(t, "{adm:"+event+"}")
	dead.Kill() // joins still in flight: some fail, none acknowledged is lost
	load.end()
	cl.WaitFailover(t, dead)
	members, err := s.Members(ctx, event, "main", 0)
	if err != nil {
		t.Fatal(err)
	}
	have := map[admission.VisitorID]bool{}
	for _, v := range members {
		have[v] = true
	}
	lost := 0
	for v := range load.acked {
		if !have[v] {
			lost++
		}
	}
	t.Logf("%d joins acknowledged, %d failed, %d on the promoted replica", len(load.acked), load.failed, len(have))
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged joins are lost", lost, len(load.acked))
	}
	draws, err := s.Draws(ctx, event, "main", -1)
	if err != nil || len(draws) != 1 || string(draws[0].Seed) != "seed" {
		t.Fatalf("the draw after the failover: %v, %v", draws, err)
	}
}

// TestTooFewReplicas: a join that fewer replicas than MinReplicasAcked
// confirm fails as the store being down (a 503), and says why.
func TestTooFewReplicas(t *testing.T) {
	r := redistest.StartReplicated(t, 1, redistest.Options{})
	s, _ := failoverStore(t, redisconn.Settings{URL: r.Master.URL(), MinReplicasAcked: 2, AckTimeout: 50 * time.Millisecond})
	err := s.AppendMember(context.Background(), "ev", "main", 0, visitor(1))
	if !errors.Is(err, admission.ErrStoreDown) || !errors.Is(err, redisbatch.ErrNotReplicated) {
		t.Fatalf("AppendMember with 1 of 2 replicas: %v", err)
	}
	s1, _ := failoverStore(t, redisconn.Settings{URL: r.Master.URL(), MinReplicasAcked: 1})
	if err := s1.AppendMember(context.Background(), "ev", "main", 0, visitor(2)); err != nil {
		t.Fatalf("AppendMember with 1 of 1 replica: %v", err)
	}
}
