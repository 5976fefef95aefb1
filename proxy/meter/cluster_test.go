package meter_test

// One room across replicas: admission engines, each with its own meter,
// sharing one real redis-server, with visitors balanced over them by a
// sticky or a random balancer, in simulated time (a fake clock moved by
// the test; Redis's own clock only runs the lease and the samples'
// expiry, which simulated time outpaces).

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/proxy/meter"
)

var (
	ctx     = context.Background()
	simRuns atomic.Int64 // numbers the runs' key prefixes
)

// The scenario: 300 visitors queue before the on-sale; once admitted
// each makes 5 requests 2 s apart (100 ms each) and completes with the
// last; max_active is 30; the origin never slows down, so the cap is
// what binds.
const (
	clusterVisitors = 300
	clusterCap      = 30
	clusterRequests = 5
	clusterThink    = 2 * time.Second
	clusterLatency  = 100 * time.Millisecond
	clusterPoll     = 2 * time.Second
	clusterStep     = 100 * time.Millisecond
	clusterEvent    = "sale"
)

// balancing is how the balancer spreads a visitor's requests.
type balancing int

const (
	sticky balancing = iota // every request of a visitor to one replica
	random                  // each request to a replica at random
)

func (b balancing) String() string { return [...]string{"sticky", "random"}[b] }

// clusterSim is one run: replicas, visitors, and what was observed.
type clusterSim struct {
	t       *testing.T
	clk     *fakeclock.Clock
	engines []*admission.Engine
	meters  []*meter.Meter
	dead    []bool
	bal     balancing
	rng     *rand.Rand
	onSale  time.Time
	vs      []*simVisitor

	// Observed: visitors at the origin now (made their first request, not
	// completed) and at most; the most one tick admitted (the serving
	// counter's advance); completions; the last completion.
	active, maxActive int
	maxTickAdmit      int
	serving           uint64
	done              int
	end               time.Time
	ticks             int
}

type simVisitor struct {
	id      int
	ticket  admission.Ticket
	replica int // sticky: the replica the balancer chose
	pass    *admission.Pass
	seen    []*meter.Presence // per replica: its pass cache's entry
	used    []bool
	next    time.Time
	left    int
	inside  bool
	done    bool
}

func newClusterSim(t *testing.T, replicas int, bal balancing, seed uint64, lease time.Duration) *clusterSim {
	t.Helper()
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	return newClusterSimOn(t, func() redis.UniversalClient { return srv.Client() }, replicas, bal, seed, lease)
}

// newClusterSimOn is newClusterSim with each replica's Redis client from
// client; opts change the event's configuration.
func newClusterSimOn(t *testing.T, client func() redis.UniversalClient, replicas int, bal balancing, seed uint64, lease time.Duration,
	opts ...func(*admission.EventConfig)) *clusterSim {
	t.Helper()
	run := simRuns.Add(1)
	// Redis runs the lease and the samples' ttl on its own clock:
	// simulated time starts at the real time and runs ahead of it.
	start := time.Now().UTC().Truncate(time.Second)
	s := &clusterSim{t: t, clk: fakeclock.New(start), bal: bal, rng: rand.New(rand.NewPCG(seed, 1)),
		onSale: start.Add(10 * time.Second)}
	cfg := admission.EventConfig{ID: clusterEvent, QueueOpensAt: start, OnSaleAt: s.onSale,
		Caps: admission.Caps{MaxActive: clusterCap}}
	for _, o := range opts {
		o(&cfg)
	}
	for i := range replicas {
		// A prefix of the run's own: runs may share a Redis.
		st, err := redisstore.New(ctx, redisstore.Options{Client: client(), Prefix: fmt.Sprintf("sim%d:", run)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		m := meter.New(meter.Options{Clock: s.clk.Now})
		m.Event(clusterEvent)
		e, err := admission.New(admission.Options{Store: st, Clock: s.clk.Now, Meter: m,
			Replica: fmt.Sprint("replica-", i), Lease: lease, Rand: rand.NewChaCha8([32]byte{byte(seed), byte(i)}),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.engines, s.meters, s.dead = append(s.engines, e), append(s.meters, m), append(s.dead, false)
	}
	for i := range clusterVisitors {
		v := &simVisitor{id: i, replica: s.rng.IntN(replicas), seen: make([]*meter.Presence, replicas),
			used: make([]bool, replicas), left: clusterRequests,
			next: start.Add(time.Duration(s.rng.Int64N(int64(8 * time.Second))))}
		s.vs = append(s.vs, v)
	}
	return s
}

// pick is the replica the balancer sends a visitor's request to.
func (s *clusterSim) pick(v *simVisitor) int {
	if s.bal == sticky && !s.dead[v.replica] {
		return v.replica
	}
	var live []int
	for i, d := range s.dead {
		if !d {
			live = append(live, i)
		}
	}
	r := live[s.rng.IntN(len(live))]
	if s.bal == sticky {
		v.replica = r // its replica died: the balancer moves it for good
	}
	return r
}

// act runs what visitor v does at now.
func (s *clusterSim) act(v *simVisitor, now time.Time) {
	r := s.pick(v)
	e := s.engines[r]
	switch {
	case v.ticket.Visitor == (admission.VisitorID{}):
		tk, _, err := e.Join(ctx, clusterEvent, admission.JoinRequest{})
		if err != nil {
			s.t.Fatalf("join: %v", err)
		}
		v.ticket, v.next = tk, now.Add(clusterPoll)
	case v.pass == nil:
		res, err := e.Status(ctx, clusterEvent, v.ticket)
		if err != nil {
			s.t.Fatalf("status: %v", err)
		}
		v.ticket = res.Ticket
		if res.Pass != nil {
			v.pass, v.next = res.Pass, now.Add(clusterStep) // straight back to the shop
			return
		}
		v.next = now.Add(clusterPoll)
	default:
		// One request to the origin through replica r, as the proxy
		// measures it: the pass's cache entry on that replica, seen,
		// timed, its first use noted, and the last one completes.
		p := v.seen[r]
		if p == nil {
			p = new(meter.Presence)
			p.Identify(v.pass.Visitor)
			v.seen[r] = p
		}
		me := s.meters[r].Event(clusterEvent)
		me.SeenAt(p, now)
		me.DoneAt(me.StartAt(now.Add(-clusterLatency)), now, 200, false)
		if !v.used[r] {
			v.used[r] = e.NoteUse(clusterEvent, v.pass)
		}
		if !v.inside {
			v.inside = true
			s.active++
			s.maxActive = max(s.maxActive, s.active)
		}
		v.left--
		if v.left > 0 {
			v.next = now.Add(clusterThink)
			return
		}
		if me.Complete(p) {
			e.Complete(clusterEvent, v.pass.Visitor)
		}
		v.done, v.inside = true, false
		s.active--
		s.done++
		s.end = now
	}
}

// tick ticks every live replica, in order, and notes the admissions.
func (s *clusterSim) tick() {
	for i, e := range s.engines {
		if s.dead[i] {
			continue
		}
		if err := e.Tick(ctx); err != nil {
			s.t.Fatalf("replica %d: tick: %v", i, err)
		}
	}
	s.ticks++
	for i, e := range s.engines {
		if f := e.Figures(clusterEvent); !s.dead[i] && f.Leader {
			if v := f.Lanes[admission.PublicLane].Serving; v > s.serving {
				s.maxTickAdmit = max(s.maxTickAdmit, int(v-s.serving))
				s.serving = v
			}
		}
	}
}

// run moves simulated time in steps until every visitor completed, or
// until limit; every whole second the replicas tick. between, when set,
// runs before each tick.
func (s *clusterSim) run(limit time.Duration, between func(now time.Time)) {
	start := s.clk.Now()
	for now := start; s.done < len(s.vs) && now.Sub(start) < limit; now = now.Add(clusterStep) {
		s.clk.Set(now)
		for _, v := range s.vs {
			if !v.done && !now.Before(v.next) {
				s.act(v, now)
			}
		}
		if now.Sub(start)%time.Second == 0 {
			if between != nil {
				between(now)
			}
			s.tick()
		}
	}
}

// sale is how long the sale took: from the on-sale to the last
// completion.
func (s *clusterSim) sale() time.Duration {
	if s.done < len(s.vs) {
		s.t.Fatalf("%d of %d visitors completed", s.done, len(s.vs))
	}
	return s.end.Sub(s.onSale)
}

// TestClusterCapAndPace: three replicas, each measuring the visitors it
// serves, behave as one room. The stated bound: the visitors at the
// origin at once never exceed max_active plus one tick's admissions (the
// most the serving counter advanced at one tick), with sticky and with
// random balancing; and the sale takes at most 1.2 times what it takes
// one replica in the same run. Before the leader summed the replicas'
// samples, sticky balancing let in three times the cap, and random
// balancing stalled for the visitors who had completed elsewhere.
func TestClusterCapAndPace(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three simulated sales over Redis")
	}
	one := newClusterSim(t, 1, sticky, 1, 0)
	one.run(30*time.Minute, nil)
	base := one.sale()
	t.Logf("one replica: sale %v, at most %d active (cap %d, most admitted in a tick %d)", base, one.maxActive, clusterCap, one.maxTickAdmit)
	if one.maxActive > clusterCap+one.maxTickAdmit {
		t.Errorf("one replica: %d active at once, cap %d plus a tick's %d", one.maxActive, clusterCap, one.maxTickAdmit)
	}
	for _, bal := range []balancing{sticky, random} {
		t.Run(bal.String(), func(t *testing.T) {
			s := newClusterSim(t, 3, bal, 1, 0)
			s.run(30*time.Minute, nil)
			d := s.sale()
			ratio := d.Seconds() / base.Seconds()
			t.Logf("three replicas, %s: sale %v (%.2f× one replica's), at most %d active (cap %d, most admitted in a tick %d)",
				bal, d, ratio, s.maxActive, clusterCap, s.maxTickAdmit)
			if s.maxActive > clusterCap+s.maxTickAdmit {
				t.Errorf("%d visitors active at once: over the cap %d plus a tick's admissions %d", s.maxActive, clusterCap, s.maxTickAdmit)
			}
			if s.maxTickAdmit > clusterCap {
				t.Errorf("one tick admitted %d, more than the cap %d", s.maxTickAdmit, clusterCap)
			}
			if ratio > 1.2 {
				t.Errorf("the sale took %v over three replicas, %.2f× the %v of one (want ≤ 1.2×)", d, ratio, base)
			}
		})
	}
}

// TestClusterOnRedisCluster: the same with random balancing over a
// three-master Redis Cluster: an event's samples, like all its keys,
// live on one shard.
func TestClusterOnRedisCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two simulated sales over a Redis Cluster")
	}
	cl := redistest.StartCluster(t, 3)
	client := func() redis.UniversalClient {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
		t.Cleanup(func() { c.Close() })
		return c
	}
	one := newClusterSimOn(t, client, 1, sticky, 3, 0)
	one.run(30*time.Minute, nil)
	three := newClusterSimOn(t, client, 3, random, 3, 0)
	three.run(30*time.Minute, nil)
	ratio := three.sale().Seconds() / one.sale().Seconds()
	t.Logf("Redis Cluster: one replica %v, three (random) %v: %.2f×; at most %d active (cap %d, most admitted in a tick %d)",
		one.sale(), three.sale(), ratio, three.maxActive, clusterCap, three.maxTickAdmit)
	if three.maxActive > clusterCap+three.maxTickAdmit || ratio > 1.2 {
		t.Errorf("%d active at once (cap %d plus a tick's %d); %.2f× one replica's sale (want ≤ 1.2×)",
			three.maxActive, clusterCap, three.maxTickAdmit, ratio)
	}
}

// TestClusterLeaderKilled: the leader stops mid-sale without Close (as
// a kill -9 leaves it: no more ticks, its lease and sample left to run
// out). Once its lease has run out the next tick of another replica
// takes over with the saved controller state (its limit, not a fresh
// start) and the measurements the others publish, and admits at that
// tick or the next; the cap holds throughout.
func TestClusterLeaderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a simulated sale over Redis")
	}
	const lease = 2 * time.Second
	s := newClusterSim(t, 3, random, 2, lease)
	killed, took := -1, -1
	var before admission.Figures
	var servingAt uint64
	resumed := 0 // ticks from the takeover until the serving counter moved
	s.run(30*time.Minute, func(now time.Time) {
		switch {
		case killed < 0 && s.done >= clusterVisitors/3:
			for i, e := range s.engines {
				if f := e.Figures(clusterEvent); f.Leader {
					killed, before = i, f
				}
			}
			if killed < 0 {
				t.Fatal("no leader mid-sale")
			}
			s.dead[killed] = true
			servingAt = s.serving
			// The others keep ticking (simulated time stands still) until
			// the dead leader's lease runs out in Redis, in real time.
			for waited := time.Duration(0); took < 0; waited += 100 * time.Millisecond {
				if waited > 3*s.engines[0].Lease(clusterEvent) {
					t.Fatal("nobody took over the lease")
				}
				time.Sleep(100 * time.Millisecond)
				s.tick()
				for i, e := range s.engines {
					if !s.dead[i] && e.Figures(clusterEvent).Leader {
						took = i
					}
				}
			}
			f := s.engines[took].Figures(clusterEvent)
			t.Logf("replica %d took over from replica %d: limit %d (was %d), reason %s, %d active over %d replicas, %d unarrived",
				took, killed, f.Limit, before.Limit, f.Decision.Reason, f.Last.Active, f.Replicas, f.Unarrived)
			if f.Decision.Reason == admission.ReasonStart || f.Limit < before.Limit*8/10 {
				t.Errorf("the new leader started afresh: limit %d (the old one's %d), reason %s", f.Limit, before.Limit, f.Decision.Reason)
			}
			if f.Replicas != 2 || f.Last.Active == 0 {
				t.Errorf("the new leader decided on %d replicas' samples, %d active; want the two live ones', some active", f.Replicas, f.Last.Active)
			}
			if s.serving == servingAt {
				resumed++
			}
		case took >= 0 && s.serving == servingAt:
			resumed++
		}
	})
	if killed < 0 || took < 0 {
		t.Fatalf("killed %d, took over %d", killed, took)
	}
	d := s.sale()
	t.Logf("sale %v, at most %d active (cap %d, most admitted in a tick %d); admissions resumed %d tick(s) after the lease ran out",
		d, s.maxActive, clusterCap, s.maxTickAdmit, resumed)
	if resumed > 2 {
		t.Errorf("admissions resumed %d ticks after the lease ran out, want ≤ 2", resumed)
	}
	if s.maxActive > clusterCap+s.maxTickAdmit {
		t.Errorf("%d visitors active at once: over the cap %d plus a tick's admissions %d", s.maxActive, clusterCap, s.maxTickAdmit)
	}
}

// TestClusterSamplesRunOut: a Redis outage (or failover) longer than a
// lease leaves no sample in Redis; at the first tick after it the leader
// ticks before the others have published again. It must not take their
// visitors for none (and fill the origin a second time): a sample that
// a listing lacks counts as last read for a lease.
func TestClusterSamplesRunOut(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a simulated sale over Redis")
	}
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	s := newClusterSimOn(t, func() redis.UniversalClient { return srv.Client() }, 3, random, 4, 0)
	c := srv.Client()
	faulted := false
	var before admission.Figures
	checked := false
	s.run(30*time.Minute, func(now time.Time) {
		switch {
		case !faulted && s.done >= clusterVisitors/3:
			before = s.engines[0].Figures(clusterEvent)
			if !before.Leader {
				t.Fatal("replica 0, which ticks first, does not lead")
			}
			keys, err := c.Keys(ctx, "*:sample*").Result()
			if err != nil || len(keys) == 0 {
				t.Fatalf("sample keys: %v, %v", keys, err)
			}
			if err := c.Del(ctx, keys...).Err(); err != nil {
				t.Fatal(err)
			}
			faulted = true
		case faulted && !checked:
			f := s.engines[0].Figures(clusterEvent)
			t.Logf("before: %d active over %d replicas; after the samples ran out: %d active over %d replicas",
				before.Last.Active, before.Replicas, f.Last.Active, f.Replicas)
			if f.Replicas != 3 || f.Last.Active < before.Last.Active*8/10 {
				t.Errorf("with the samples gone from Redis the leader decided on %d replicas, %d active (before: %d over %d)",
					f.Replicas, f.Last.Active, before.Last.Active, before.Replicas)
			}
			checked = true
		}
	})
	if !checked {
		t.Fatal("the fault never happened")
	}
	if s.maxActive > clusterCap+s.maxTickAdmit {
		t.Errorf("%d visitors active at once: over the cap %d plus a tick's admissions %d", s.maxActive, clusterCap, s.maxTickAdmit)
	}
}

// TestClusterPastTheGrace: a sale that lasts longer than the no-show
// grace. The leader sees only the polls its balancer sends it: with
// sticky balancing two thirds of the visitors never poll it. Taking those
// for gone once they were drawn more than a grace ago, it passed over
// them and admitted others in their place, while they came within their
// grace through their own replica: the origin held three times the cap.
// With several replicas nobody is passed over by one replica's liveness.
func TestClusterPastTheGrace(t *testing.T) {
	if testing.Short() {
		t.Skip("runs simulated sales over Redis")
	}
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	client := func() redis.UniversalClient { return srv.Client() }
	grace := func(c *admission.EventConfig) { c.NoShowGrace = 10 * time.Second }
	one := newClusterSimOn(t, client, 1, sticky, 5, 0, grace)
	one.run(30*time.Minute, nil)
	for _, bal := range []balancing{sticky, random} {
		t.Run(bal.String(), func(t *testing.T) {
			s := newClusterSimOn(t, client, 3, bal, 5, 0, grace)
			s.run(30*time.Minute, nil)
			ratio := s.sale().Seconds() / one.sale().Seconds()
			t.Logf("no-show grace 10 s, three replicas, %s: sale %v (%.2f× one replica's %v), at most %d active (cap %d, most admitted in a tick %d)",
				bal, s.sale(), ratio, one.sale(), s.maxActive, clusterCap, s.maxTickAdmit)
			if s.maxActive > clusterCap+s.maxTickAdmit || s.maxTickAdmit > clusterCap {
				t.Errorf("%d visitors active at once, %d admitted in one tick: over the cap %d plus a tick's admissions",
					s.maxActive, s.maxTickAdmit, clusterCap)
			}
			if ratio > 1.2 {
				t.Errorf("the sale took %.2f× one replica's (want ≤ 1.2×)", ratio)
			}
		})
	}
}
