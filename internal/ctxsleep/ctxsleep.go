package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits d or until ctx ends, and reports whether d passed (false:
// ctx ended first, or had ended already when d is not positive).
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
