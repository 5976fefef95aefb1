package ctxsleep

import (
	"context"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	ctx := context.Background()
	if !Sleep(ctx, time.Millisecond) || !Sleep(ctx, 0) || !Sleep(ctx, -time.Second) {
		t.Error("a live context: Sleep reported false")
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if Sleep(done, time.Hour) || Sleep(done, 0) {
		t.Error("an ended context: Sleep reported true")
	}
	ending, cancel2 := context.WithTimeout(ctx, time.Millisecond)
	defer cancel2()
	if Sleep(ending, time.Hour) {
		t.Error("a context ending during the wait: Sleep reported true")
	}
}
