package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// StatsPath is where the counting origin tells what it saw, as JSON.
const StatsPath = "/_load/stats"

// originStats is the counting origin's answer at StatsPath.
type originStats struct {
	Visitors  int   `json:"visitors"`   // distinct visitors who reached it
	Active    int   `json:"active"`     // active now
	MaxActive int   `json:"max_active"` // most active at once
	Completes int   `json:"completes"`  // visitors told they are done
	Requests  int64 `json:"requests"`
	// PerSecond is the most visitors active at once in each second since
	// the first visitor came, at First.
	PerSecond []int     `json:"per_second"`
	First     time.Time `json:"first"`
}

// countingOrigin is a small origin that counts the admitted visitors
// active at it at once: a visitor (named by the X-Load-Visitor header
// the crowd sends) is active from their first request until the
// complete path (answered with X-Waitroom-Complete: 1) or idle seconds
// without a request. Safe for concurrent use.
type countingOrigin struct {
	complete string
	idle     time.Duration

	mu        sync.Mutex
	seen      map[string]time.Time // active visitors: last request
	done      map[string]bool
	visitors  int
	max       int
	completes int
	requests  int64
	first     time.Time
	perSecond []int
}

func newCountingOrigin(complete string, idle time.Duration) *countingOrigin {
	return &countingOrigin{complete: complete, idle: idle, seen: map[string]time.Time{}, done: map[string]bool{}}
}

func (o *countingOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == StatsPath {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(o.stats())
		return
	}
	who := r.Header.Get("X-Load-Visitor")
	now := time.Now()
	o.mu.Lock()
	o.requests++
	o.expire(now)
	if who != "" && !o.done[who] {
		if _, ok := o.seen[who]; !ok {
			o.visitors++
			if o.first.IsZero() {
				o.first = now
			}
		}
		o.seen[who] = now
		if r.URL.Path == o.complete {
			delete(o.seen, who)
			o.done[who] = true
			o.completes++
		}
		o.note(now)
	}
	o.mu.Unlock()
	w.Header().Set("X-Load-Origin", "1")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.URL.Path == o.complete {
		w.Header().Set("X-Waitroom-Complete", "1")
	}
	io.WriteString(w, "<!doctype html><title>origin</title><h1>the origin's page</h1>\n")
}

// expire drops visitors idle for longer than o.idle. o.mu is held.
func (o *countingOrigin) expire(now time.Time) {
	for k, t := range o.seen {
		if now.Sub(t) > o.idle {
			delete(o.seen, k)
		}
	}
}

// note records the number active now. o.mu is held.
func (o *countingOrigin) note(now time.Time) {
	n := len(o.seen)
	o.max = max(o.max, n)
	i := int(now.Sub(o.first) / time.Second)
	for len(o.perSecond) <= i {
		o.perSecond = append(o.perSecond, 0)
	}
	o.perSecond[i] = max(o.perSecond[i], n)
}

func (o *countingOrigin) stats() originStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.expire(time.Now())
	return originStats{Visitors: o.visitors, Active: len(o.seen), MaxActive: o.max, Completes: o.completes,
		Requests: o.requests, PerSecond: append([]int(nil), o.perSecond...), First: o.first}
}

const originUsage = `Usage: waitroom-load origin [flags]

Runs a small origin that counts the admitted visitors active at it at
once (the crowd of waitroom-load http names each with X-Load-Visitor), for
waitroom serve to forward to. GET ` + StatsPath + ` answers what it saw as
JSON; waitroom-load http -origin-stats reads it. Flags:
`

// runOrigin is `waitroom-load origin`: it serves until SIGINT or SIGTERM.
func runOrigin(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("waitroom-load origin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, originUsage); fs.PrintDefaults() }
	listen := fs.String("listen", "127.0.0.1:9000", "`address` to listen on")
	complete := fs.String("complete", "/shop/done", "the `path` whose answer carries X-Waitroom-Complete: 1 (the visitor is done)")
	idle := fs.Duration("idle", time.Minute, "a visitor without a request for this long is no longer active")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "waitroom-load origin: %v\n", err)
		return 1
	}
	srv := &http.Server{Handler: newCountingOrigin(*complete, *idle), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "waitroom-load origin listening on %s\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "waitroom-load origin: %v\n", err)
		return 1
	}
	return 0
}
