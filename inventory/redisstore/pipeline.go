package redisstore

import (
	"context"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// pipeliner sends concurrent script calls to Redis in pipelines. Each of
// its workers takes the next waiting call and every other call already
// waiting (up to maxBatch), sends them as one pipeline and hands out the
// replies. Nothing waits for a batch to fill: a lone call goes at once,
// and under load the batches grow by themselves, as a group commit does.
// One pipeline costs Redis one read and one write for many scripts, and
// the client one round trip, which is where most of a script call's cost
// is when the scripts are short.
//
// Batching never merges or reorders the effect of two calls: each script
// still runs atomically on its own, in the order the pipeline sends them.
// A pipeline that go-redis retries after a lost connection may run some
// scripts twice; every inventory script answers a repeat as its first
// run did (holds by their id, the rest by their state).
type pipeliner struct {
	c     redis.UniversalClient
	calls chan *call
	stop  chan struct{}
	wg    sync.WaitGroup // workers

	mu      sync.RWMutex
	closed  bool
	pending sync.WaitGroup // calls admitted and not yet answered
}

// call is one script run waiting for its reply.
type call struct {
	ctx  context.Context
	sc   *redis.Script
	keys []string
	args []any
	res  any
	err  error
	done chan struct{}
}

const maxBatch = 128

func newPipeliner(c redis.UniversalClient, workers int) *pipeliner {
	p := &pipeliner{c: c, calls: make(chan *call, 4*maxBatch), stop: make(chan struct{})}
	for range workers {
		p.wg.Add(1)
		go p.work()
	}
	return p
}

var callPool = sync.Pool{New: func() any { return &call{done: make(chan struct{}, 1)} }}

// run executes sc with keys and args and returns its reply.
func (p *pipeliner) run(ctx context.Context, sc *redis.Script, keys []string, args ...any) (any, error) {
	p.mu.RLock()
	if p.closed {
		p.mu.RUnlock()
		return nil, redis.ErrClosed
	}
	p.pending.Add(1)
	p.mu.RUnlock()
	defer p.pending.Done()
	c := callPool.Get().(*call)
	c.ctx, c.sc, c.keys, c.args = ctx, sc, keys, args
	select {
	case p.calls <- c:
	case <-ctx.Done():
		callPool.Put(c)
		return nil, ctx.Err()
	}
	// Once queued the call will run (unless its context ends before it is
	// sent); wait for it even if ctx ends meanwhile, so the call can be
	// reused safely.
	<-c.done
	res, err := c.res, c.err
	*c = call{done: c.done}
	callPool.Put(c)
	return res, err
}

func (p *pipeliner) work() {
	defer p.wg.Done()
	batch := make([]*call, 0, maxBatch)
	for {
		select {
		case c := <-p.calls:
			batch = append(batch[:0], c)
		case <-p.stop:
			return
		}
	more:
		for len(batch) < maxBatch {
			select {
			case c := <-p.calls:
				batch = append(batch, c)
			default:
				break more
			}
		}
		p.send(batch)
	}
}

// send runs one batch as a pipeline.
func (p *pipeliner) send(batch []*call) {
	live := batch[:0:0]
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.err = err
			c.done <- struct{}{}
			continue
		}
		live = append(live, c)
	}
	if len(live) == 1 {
		c := live[0]
		c.res, c.err = c.sc.Run(c.ctx, p.c, c.keys, c.args...).Result()
		c.done <- struct{}{}
		return
	}
	if len(live) == 0 {
		return
	}
	pipe := p.c.Pipeline()
	cmds := make([]*redis.Cmd, len(live))
	for i, c := range live {
		cmds[i] = c.sc.EvalSha(context.Background(), pipe, c.keys, c.args...)
	}
	pipe.Exec(context.Background()) // errors are per command
	for i, c := range live {
		c.res, c.err = cmds[i].Result()
		if c.err != nil && strings.HasPrefix(c.err.Error(), "NOSCRIPT") {
			// The server forgot its scripts (restart, SCRIPT FLUSH, a
			// new cluster node): Run loads it with EVAL.
			c.res, c.err = c.sc.Run(c.ctx, p.c, c.keys, c.args...).Result()
		}
		c.done <- struct{}{}
	}
}

// close refuses new calls, waits for every admitted one to be answered,
// then stops the workers.
func (p *pipeliner) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	p.pending.Wait()
	close(p.stop)
	p.wg.Wait()
}
