package redisbatch_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/redisbatch"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestBatcher sends many concurrent commands through a few pipelines and
// checks each caller gets its own reply.
func TestBatcher(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t, redistest.Options{}).Client()
	b := redisbatch.New(c, 2)
	var wg sync.WaitGroup
	for i := range 500 {
		wg.Go(func() {
			key := fmt.Sprintf("k%d", i)
			cmd, err := b.Do(ctx, func(p redis.Pipeliner) redis.Cmder { return p.IncrBy(ctx, key, int64(i)) })
			if err != nil || cmd.(*redis.IntCmd).Val() != int64(i) {
				t.Errorf("key %s: %v, %v", key, cmd, err)
			}
		})
	}
	wg.Wait()
	b.Close()
	if _, err := b.Do(ctx, func(p redis.Pipeliner) redis.Cmder { return p.Ping(ctx) }); err != redis.ErrClosed {
		t.Fatalf("Do after Close: %v", err)
	}
}

// TestScript: a script runs by SHA, and again by EVAL once the server
// has forgotten it.
func TestScript(t *testing.T) {
	c := redistest.Start(t, redistest.Options{}).Client()
	b := redisbatch.New(c, 2)
	defer b.Close()
	sc := redis.NewScript(`return redis.call('INCR', KEYS[1]) + tonumber(ARGV[1])`)
	for i, flush := range []bool{false, false, true, false} {
		if flush {
			if err := c.ScriptFlush(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
		}
		got, err := b.Script(context.Background(), sc, []string{"script:n"}, 10)
		if err != nil || got != int64(11+i) {
			t.Fatalf("run %d (flushed %v): %v, %v; want %d", i, flush, got, err, 11+i)
		}
	}
	if _, err := b.Script(context.Background(), redis.NewScript(`return redis.error_reply('ERR no')`), nil); err == nil {
		t.Fatal("an error reply came back as a result")
	}
}
