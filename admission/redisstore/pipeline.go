package redisstore

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// batcher sends concurrent single-command operations (APPEND of a
// member, SETBIT of a claim) to Redis in pipelines. Each of its workers
// takes the next waiting operation and every other one already waiting
// (up to maxBatch), and sends them as one pipeline. Nothing waits for a
// batch to fill: a lone operation goes at once, and under load batches
// grow by themselves, as a group commit does. With appendfsync always,
// Redis fsyncs once per event-loop pass, so a pipeline's commands also
// share an fsync.
//
// A pipeline that go-redis retries after a lost connection may run some
// commands twice: a member appended twice is a duplicate, which the
// contract allows (the draw drops duplicates); SETBIT is idempotent.
type batcher struct {
	c    redis.UniversalClient
	ops  chan *op
	stop chan struct{}
	wg   sync.WaitGroup // workers

	mu      sync.RWMutex
	closed  bool
	pending sync.WaitGroup // operations admitted and not yet answered
}

// op is one command waiting to be sent.
type op struct {
	ctx   context.Context
	queue func(p redis.Pipeliner) redis.Cmder
	err   error
	done  chan struct{}
}

const maxBatch = 512

func newBatcher(c redis.UniversalClient, workers int) *batcher {
	b := &batcher{c: c, ops: make(chan *op, 4*maxBatch), stop: make(chan struct{})}
	for range workers {
		b.wg.Add(1)
		go b.work()
	}
	return b
}

// do sends the command queue puts on a pipeline, with others, and
// returns its error. When ctx ends first do returns ctx.Err(), and the
// command may still run.
func (b *batcher) do(ctx context.Context, queue func(p redis.Pipeliner) redis.Cmder) error {
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return redis.ErrClosed
	}
	b.pending.Add(1)
	b.mu.RUnlock()
	defer b.pending.Done()
	o := &op{ctx: ctx, queue: queue, done: make(chan struct{}, 1)}
	select {
	case b.ops <- o:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-o.done:
		return o.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *batcher) work() {
	defer b.wg.Done()
	batch := make([]*op, 0, maxBatch)
	for {
		select {
		case o := <-b.ops:
			batch = append(batch[:0], o)
		case <-b.stop:
			return
		}
	more:
		for len(batch) < maxBatch {
			select {
			case o := <-b.ops:
				batch = append(batch, o)
			default:
				break more
			}
		}
		b.send(batch)
	}
}

// send runs one batch as a pipeline. Operations whose caller gave up
// before the batch left are dropped.
func (b *batcher) send(batch []*op) {
	pipe := b.c.Pipeline()
	live := make([]*op, 0, len(batch))
	cmds := make([]redis.Cmder, 0, len(batch))
	for _, o := range batch {
		if err := o.ctx.Err(); err != nil {
			o.err = err
			o.done <- struct{}{}
			continue
		}
		live = append(live, o)
		cmds = append(cmds, o.queue(pipe))
	}
	if len(live) == 0 {
		return
	}
	// One caller's context must not fail the others' commands.
	pipe.Exec(context.Background()) // errors are per command
	for i, o := range live {
		o.err = cmds[i].Err()
		o.done <- struct{}{}
	}
}

// close refuses new operations, waits for every admitted one to be
// answered, then stops the workers.
func (b *batcher) close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	b.mu.Unlock()
	b.pending.Wait()
	close(b.stop)
	b.wg.Wait()
}
