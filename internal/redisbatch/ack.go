package redisbatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Ack makes writes durable across a failover: a Durable command is
// acknowledged only after WAIT confirms that Replicas replicas of its
// key's master have it. Plain data.
type Ack struct {
	// Replicas is how many replicas must confirm (0: none, no WAIT).
	Replicas int
	// Timeout bounds the WAIT.
	Timeout time.Duration
	// RetryFor bounds how long a Durable command that Redis did not
	// run (NotExecuted says which) is sent again, after the Redis
	// Cluster client reloaded its slots, so a failover does not fail it.
	RetryFor time.Duration
	// NotExecuted reports errors after which a command surely did not
	// run; nil: none is retried.
	NotExecuted func(error) bool
}

// ErrNotReplicated is a write that fewer replicas than Ack.Replicas
// confirmed within Ack.Timeout: the master has it, a failover may lose
// it, and the caller must not claim it done.
var ErrNotReplicated = errors.New("redisbatch: too few replicas acknowledged the write")

// Durable is Do for a write that must survive a failover: with
// Ack.Replicas > 0 the command goes in a pipeline, on the connection of
// the master that serves key, followed by WAIT Replicas Timeout (WAIT
// counts the replicas that have every write of its own connection), and
// fails with ErrNotReplicated when too few confirm. Without a WAIT it is
// Do. Commands that Redis did not run are sent again, within
// Ack.RetryFor.
func (b *Batcher) Durable(ctx context.Context, key string, queue func(p redis.Pipeliner) redis.Cmder) (redis.Cmder, error) {
	if b.ack.Replicas <= 0 {
		return b.Do(ctx, queue)
	}
	deadline := time.Now().Add(b.ack.RetryFor)
	backoff := 25 * time.Millisecond
	for {
		cmd, err := b.do(ctx, key, queue)
		if err == nil || b.ack.NotExecuted == nil || !b.ack.NotExecuted(err) || time.Until(deadline) < backoff {
			return cmd, err
		}
		if cc, ok := b.c.(*redis.ClusterClient); ok {
			cc.ReloadState(ctx)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		backoff = min(2*backoff, 250*time.Millisecond)
	}
}

// sendDurable sends durable commands in one pipeline per master, each
// ended by a WAIT whose answer applies to every command before it.
func (b *Batcher) sendDurable(ops []*op) {
	groups := map[*redis.Client][]*op{}
	cc, cluster := b.c.(*redis.ClusterClient)
	for _, o := range ops {
		var node *redis.Client
		if cluster {
			n, err := cc.MasterForKey(context.Background(), o.key)
			if err != nil {
				o.err = err
				o.done <- struct{}{}
				continue
			}
			node = n
		}
		groups[node] = append(groups[node], o)
	}
	var wg sync.WaitGroup
	for node, group := range groups {
		wg.Go(func() {
			var pipe redis.Pipeliner
			if node != nil {
				pipe = node.Pipeline()
			} else {
				pipe = b.c.Pipeline() // one connection: a standalone or Sentinel client
			}
			for _, o := range group {
				o.cmd = o.queue(pipe)
			}
			wait := pipe.Do(context.Background(), "WAIT", b.ack.Replicas, max(b.ack.Timeout.Milliseconds(), 1))
			pipe.Exec(context.Background()) // errors are per command
			for _, o := range group {
				o.err = o.cmd.Err()
				if o.err == nil || errors.Is(o.err, redis.Nil) {
					switch n, err := wait.Int64(); {
					case err != nil:
						o.err = err
					case n < int64(b.ack.Replicas):
						o.err = fmt.Errorf("%w: %d of %d within %v", ErrNotReplicated, n, b.ack.Replicas, b.ack.Timeout)
					}
				}
				o.done <- struct{}{}
			}
		})
	}
	wg.Wait()
}
