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
