package redisconn

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/ctxsleep"
)

// retryHook retries commands and pipelines that Redis did not execute
// while a failover lasts: with backoff (25 ms doubling to 250 ms), for at
// most retryFor, never past the context's end. Before each retry it
// calls reload (a Redis Cluster client's slot reload), so the client
// learns the promoted replica's address instead of dialling the dead
// master again. A command that may have run (a connection lost after it
// was sent) is not retried here: its error reaches the caller, who says
// 503 and claims nothing.
type retryHook struct {
	retryFor time.Duration
	reload   func()
}

func (h *retryHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *retryHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if !NotExecuted(err) {
			return err // the common case: no retrier, no clock read
		}
		for r := h.start(); NotExecuted(err) && r.wait(ctx); {
			cmd.SetErr(nil)
			err = next(ctx, cmd)
		}
		return err
	}
}

func (h *retryHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		var r *retrier // started at the first retry: most pipelines need none
		for {
			// Only the commands Redis refused run again: in a Cluster
			// pipeline the other nodes' commands are done.
			var again []redis.Cmder
			for _, c := range cmds {
				if e := c.Err(); e != nil && NotExecuted(e) {
					again = append(again, c)
				}
			}
			if len(again) == 0 {
				return err
			}
			if r == nil {
				r = h.start()
			}
			if !r.wait(ctx) {
				return err
			}
			for _, c := range again {
				c.SetErr(nil)
			}
			err = next(ctx, again)
			if err == nil {
				for _, c := range cmds {
					if e := c.Err(); e != nil {
						err = e
						break
					}
				}
			}
		}
	}
}

// noRetry marks a context whose commands are not retried (Ping's).
type noRetry struct{}

// retrier is one command's retries.
type retrier struct {
	h        *retryHook
	deadline time.Time
	backoff  time.Duration
}

func (h *retryHook) start() *retrier {
	return &retrier{h: h, deadline: time.Now().Add(h.retryFor), backoff: 25 * time.Millisecond}
}

// wait reloads the topology and sleeps before a retry; false when the
// budget or the context is spent.
func (r *retrier) wait(ctx context.Context) bool {
	if ctx.Value(noRetry{}) != nil {
		return false
	}
	if r.h.reload != nil {
		r.h.reload()
	}
	d := r.backoff
	r.backoff = min(2*r.backoff, 250*time.Millisecond)
	if time.Until(r.deadline) < d {
		return false
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return false
	}
	return ctxsleep.Sleep(ctx, d)
}

// notExecuted are the error replies of a Redis that refused a command
// without running it: a cluster without a master for the slot, a slot
// moving or moved, a node loading its data, a replica (a demoted master)
// refusing a write, a replica whose master is gone, a master with too few
// replicas for its min-replicas-to-write.
var notExecuted = []string{"CLUSTERDOWN ", "TRYAGAIN ", "LOADING ", "READONLY ", "MASTERDOWN ", "MOVED ", "ASK ", "NOREPLICAS "}

// NotExecuted reports whether err says Redis did not run the command, so
// that running it again cannot apply it twice: a dial that failed, or
// an error reply of a node that refused it while a failover lasts.
func NotExecuted(err error) bool {
	if err == nil {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		for _, p := range notExecuted {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
	}
	return false
}

// Ping reports whether c's Redis answers now, without retrying: for a
// Redis Cluster, every master it knows of answers PING (a Cluster client
// whose master does not answer reloads its slots, so the next Ping asks
// the promoted replica); otherwise the (current) master does. For
// readiness probes.
func Ping(ctx context.Context, c redis.UniversalClient) error {
	ctx = context.WithValue(ctx, noRetry{}, true)
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		return c.Ping(ctx).Err()
	}
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		return m.Ping(ctx).Err()
	})
	if err != nil {
		cc.ReloadState(ctx)
	}
	return err
}
