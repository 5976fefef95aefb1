package redisbatch

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// MaxBatch bounds how many commands one pipeline carries.
const MaxBatch = 512

// Batcher pipelines concurrent commands. It is safe for concurrent use.
type Batcher struct {
	c    redis.UniversalClient
	ack  Ack
	ops  chan *op
	stop chan struct{}
	wg   sync.WaitGroup // workers

	mu      sync.RWMutex
	closed  bool
	pending sync.WaitGroup // commands admitted and not yet answered
}

// op is one command waiting to be sent.
type op struct {
	key   string // durable: the key whose master must have replicas ack it
	ctx   context.Context
	queue func(p redis.Pipeliner) redis.Cmder
	cmd   redis.Cmder
	err   error
	done  chan struct{}
}

// New starts a Batcher with workers pipelines in flight at most.
func New(c redis.UniversalClient, workers int) *Batcher {
	return NewAcked(c, workers, Ack{})
}

// NewAcked starts a Batcher whose Durable commands are acknowledged only
// once ack.Replicas replicas have them.
func NewAcked(c redis.UniversalClient, workers int, ack Ack) *Batcher {
	b := &Batcher{c: c, ack: ack, ops: make(chan *op, 4*MaxBatch), stop: make(chan struct{})}
	for range max(workers, 1) {
		b.wg.Add(1)
		go b.work()
	}
	return b
}

// Do sends the command queue puts on a pipeline, together with others,
// and returns it with its error. When ctx ends first, Do returns
// ctx.Err() and the command may still run.
func (b *Batcher) Do(ctx context.Context, queue func(p redis.Pipeliner) redis.Cmder) (redis.Cmder, error) {
	return b.do(ctx, "", queue)
}

func (b *Batcher) do(ctx context.Context, key string, queue func(p redis.Pipeliner) redis.Cmder) (redis.Cmder, error) {
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return nil, redis.ErrClosed
	}
	b.pending.Add(1)
	b.mu.RUnlock()
	defer b.pending.Done()
	o := &op{ctx: ctx, key: key, queue: queue, done: make(chan struct{}, 1)}
	select {
	case b.ops <- o:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-o.done:
		return o.cmd, o.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (b *Batcher) work() {
	defer b.wg.Done()
	batch := make([]*op, 0, MaxBatch)
	for {
		select {
		case o := <-b.ops:
			batch = append(batch[:0], o)
		case <-b.stop:
			return
		}
	more:
		for len(batch) < MaxBatch {
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

// send runs one batch as a pipeline. Commands whose caller gave up before
// the batch left are dropped.
func (b *Batcher) send(batch []*op) {
	pipe := b.c.Pipeline()
	live := make([]*op, 0, len(batch))
	var durable []*op
	for _, o := range batch {
		if err := o.ctx.Err(); err != nil {
			o.err = err
			o.done <- struct{}{}
			continue
		}
		if o.key != "" && b.ack.Replicas > 0 {
			durable = append(durable, o)
			continue
		}
		o.cmd = o.queue(pipe)
		live = append(live, o)
	}
	if len(durable) > 0 {
		b.sendDurable(durable)
	}
	if len(live) == 0 {
		return
	}
	// One caller's context must not fail the others' commands.
	pipe.Exec(context.Background()) // errors are per command
	for _, o := range live {
		o.err = o.cmd.Err()
		o.done <- struct{}{}
	}
}

// Close refuses new commands, waits for every admitted one to be
// answered, then stops the workers.
func (b *Batcher) Close() {
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

// Script runs sc by its SHA in a pipeline with the commands around it,
// and with EVAL (which loads it) when the server answers NOSCRIPT (a
// restart, SCRIPT FLUSH, a failover to a node that never ran it). It
// returns the script's reply.
func (b *Batcher) Script(ctx context.Context, sc *redis.Script, keys []string, args ...any) (any, error) {
	return script(ctx, b.Do, sc, keys, args...)
}

// DurableScript is Script for a script that writes durably: it goes
// through Durable, on the master of keys[0], and waits for replicas.
func (b *Batcher) DurableScript(ctx context.Context, sc *redis.Script, keys []string, args ...any) (any, error) {
	return script(ctx, func(ctx context.Context, q func(redis.Pipeliner) redis.Cmder) (redis.Cmder, error) {
		return b.Durable(ctx, keys[0], q)
	}, sc, keys, args...)
}

// script runs sc through send by SHA, then by EVAL on NOSCRIPT.
func script(ctx context.Context, send func(context.Context, func(redis.Pipeliner) redis.Cmder) (redis.Cmder, error),
	sc *redis.Script, keys []string, args ...any) (any, error) {
	cmd, err := send(ctx, func(p redis.Pipeliner) redis.Cmder {
		return sc.EvalSha(context.Background(), p, keys, args...)
	})
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		cmd, err = send(ctx, func(p redis.Pipeliner) redis.Cmder {
			return sc.Eval(context.Background(), p, keys, args...)
		})
	}
	if err != nil {
		return nil, err
	}
	return cmd.(*redis.Cmd).Val(), nil
}
