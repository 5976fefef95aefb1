package main

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission/sim/figures"
)

// TestOriginLine sends more requests than the origin serves and queues at
// once: the extra ones are refused with Retry-After, the queued ones
// served after the first, and the series counts both.
func TestOriginLine(t *testing.T) {
	const lat = time.Second // long enough that the 4th request comes while the first are served
	o := newOrigin(originConfig{T0: time.Now().Add(-time.Hour), Capacity: 2, Queue: 1, Latency: lat})
	srv := httptest.NewServer(o)
	defer srv.Close()

	// Fill the two slots and the line one at a time, so that nothing
	// depends on how fast goroutines start; the 4th is refused.
	results := make(chan *http.Response, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/gated/p1"
			if i == 2 {
				path = checkoutPath
			}
			resp, err := http.Get(srv.URL + path)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			results <- resp
		}()
		waitFor(t, func() bool { o.mu.Lock(); defer o.mu.Unlock(); return o.busy+len(o.queue) == i+1 })
	}
	resp, err := http.Get(srv.URL + "/gated/p2")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("past the line: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	wg.Wait()
	close(results)
	complete := 0
	for r := range results {
		if r.StatusCode != 200 || r.Header.Get(originMarker) != "1" {
			t.Errorf("served: %d %v", r.StatusCode, r.Header)
		}
		if r.Header.Get("X-Waitroom-Complete") == "1" {
			complete++
		}
	}
	if complete != 1 {
		t.Errorf("%d answers with X-Waitroom-Complete, want the checkout's", complete)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var done, checkouts, rejected int
	var lats []float64
	for _, s := range o.secs {
		done, checkouts, rejected = done+s.done, checkouts+s.checkouts, rejected+s.rejected
		lats = append(lats, s.lat...)
	}
	if done != 3 || checkouts != 1 || rejected != 1 || o.busy != 0 {
		t.Errorf("done %d, checkouts %d, rejected %d, busy %d; want 3, 1, 1, 0", done, checkouts, rejected, o.busy)
	}
	// The one that waited in line took about two latencies.
	slowest := figures.Quantile(lats, 1)
	if slowest < 2*float64(lat/time.Millisecond)*0.95 {
		t.Errorf("the queued request took %.0f ms, want about %v", slowest, 2*lat)
	}
}

// TestOriginBusyIntegral: the slot-seconds recorded per second add up to
// the time the slots were held.
func TestOriginBusyIntegral(t *testing.T) {
	t0 := time.Now().Truncate(time.Second).Add(-10 * time.Second)
	o := &origin{cfg: originConfig{T0: t0, Capacity: 4}, cap: 4, last: t0.Add(2500 * time.Millisecond)}
	o.busy = 2
	o.advance(t0.Add(4250 * time.Millisecond)) // 2 slots from 2.5 s to 4.25 s
	want := []float64{0, 0, 1, 2, 0.5}
	for i, w := range want {
		if got := o.secs[i].busy; got < w-1e-9 || got > w+1e-9 {
			t.Errorf("second %d: busy %v, want %v", i, got, w)
		}
	}
	if got := o.secs[3].capSum; got < 4-1e-9 || got > 4+1e-9 {
		t.Errorf("second 3: capacity %v, want 4", got)
	}
	if c := (originConfig{Capacity: 20, BrownStart: time.Minute, BrownEnd: 2 * time.Minute, BrownFactor: 0.5}); c.capacityAt(90*time.Second) != 10 || c.capacityAt(2*time.Minute) != 20 {
		t.Error("capacityAt does not follow the brown-out")
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
