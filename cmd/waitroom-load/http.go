package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/waitroom/waitroom/inventory/client"
)

const httpUsage = `Usage: waitroom-load http -targets URL[,URL...] [flags]

Sends a crowd of visitors, over keep-alive connections, through the real
visitor flow of one or more waitroom serve replicas: the challenge (its
proof of work solved), the join, status polls at the refresh_seconds the
room answers, the pass, the gated page at the origin, a seat held and
confirmed through the seat-hold sidecar (with idempotency keys), and the
origin's "done" page (X-Waitroom-Complete). Then it checks every
acknowledged join against the published draws and the sidecar's audit
for seats sold twice, and prints joins/s, polls/s, admitted/min, the cap
held (from a counting origin, waitroom-load origin), ETA honesty, seats
sold twice and acknowledged joins lost. Exit status 1 when an invariant
broke (with -check), or the run could not be made.

The event should allow the crowd: no API rate limits or
max_connections_per_client (it comes from one address), a challenge of
light bits. Flags:
`

// runHTTP is `waitroom-load http`.
func runHTTP(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("waitroom-load http", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, httpUsage); fs.PrintDefaults() }
	targetList := fs.String("targets", "", "comma-separated base `URLs` of the waitroom replicas (http://127.0.0.1:8080,...)")
	balance := fs.String("balance", "sticky", "how visitors spread over the replicas: sticky (one replica each while it answers) or random (each request)")
	event := fs.String("event", "", "the event `id` to join")
	gate := fs.String("gate", "/shop/", "the gated `path` visitors want; the join's return path")
	complete := fs.String("complete", "/shop/done", "origin `path` requested when a visitor is done (the origin answers X-Waitroom-Complete); empty: none")
	visitors := fs.Int("visitors", 1000, "visitors in the crowd")
	arrive := fs.Duration("arrive", 10*time.Second, "arrivals spread evenly over this")
	think := fs.Duration("think", time.Second, "time at the origin before buying")
	conns := fs.Int("conns", 256, "keep-alive connections per replica, at most")
	maxPoll := fs.Duration("max-poll", 0, "longest wait between two polls (0: refresh_seconds as told)")
	pages := fs.Int("pages", 1, "gated pages an admitted visitor asks for before buying")
	joinOnly := fs.Bool("join-only", false, "visitors stop after their join (to measure joins alone)")
	polls := fs.Int("polls", 0, "a waiting visitor stops after this many polls (0: polls until admitted)")
	duration := fs.Duration("duration", 10*time.Minute, "the run ends after this, admitted or not")
	timeout := fs.Duration("timeout", 30*time.Second, "one request's timeout")
	invURL := fs.String("inventory", "", "the seat-hold sidecar's base `URL`; empty: no purchase (token from WAITROOM_INVENTORY_TOKEN)")
	invEvent := fs.String("inventory-event", "", "the sidecar's event (default: -event)")
	section := fs.String("section", "A", "buy the best available seat of this section")
	tier := fs.String("tier", "", "or of this tier")
	originStats := fs.String("origin-stats", "", "`URL` of a counting origin's "+StatsPath+" (waitroom-load origin), for the cap held")
	maxActive := fs.Int("max-active", 0, "the event's caps.max_active, to hold the origin's count to")
	slack := fs.Int("cap-slack", 0, "visitors over max_active the cap may be exceeded by (the stated bound: one tick's admissions)")
	drawWait := fs.Duration("draw-wait", 30*time.Second, "how long to wait for a draw still due at the end")
	jsonOut := fs.String("json", "", "also write the report as JSON to this `file`")
	check := fs.Bool("check", false, "exit 1 when an acknowledged join is lost, a seat sold twice or the cap exceeded")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "waitroom-load http: "+format+"\n", a...)
		return 2
	}
	var bases []string
	for _, b := range strings.Split(*targetList, ",") {
		if b = strings.TrimRight(strings.TrimSpace(b), "/"); b != "" {
			if !strings.HasPrefix(b, "http://") && !strings.HasPrefix(b, "https://") {
				return bad("target %q: want an http:// or https:// URL", b)
			}
			bases = append(bases, b)
		}
	}
	switch {
	case len(bases) == 0:
		return bad("-targets is required")
	case *event == "":
		return bad("-event is required")
	case *balance != "sticky" && *balance != "random":
		return bad("-balance must be sticky or random")
	case *visitors < 1 || *conns < 1 || *pages < 1:
		return bad("-visitors, -conns and -pages must be at least 1")
	case *polls < 0:
		return bad("-polls must not be negative")
	case !strings.HasPrefix(*gate, "/") || *complete != "" && !strings.HasPrefix(*complete, "/"):
		return bad("-gate and -complete are paths starting with /")
	}
	cfg := crowdConfig{Event: *event, Gate: *gate, Complete: *complete, Visitors: *visitors, Arrive: *arrive,
		Think: *think, MaxPoll: *maxPoll, Pages: *pages, JoinOnly: *joinOnly, Polls: *polls, Section: *section, Tier: *tier, InventoryEvent: *invEvent}
	if cfg.InventoryEvent == "" {
		cfg.InventoryEvent = *event
	}
	if *invURL != "" {
		token := os.Getenv("WAITROOM_INVENTORY_TOKEN")
		if token == "" {
			return bad("-inventory needs WAITROOM_INVENTORY_TOKEN")
		}
		cfg.Inventory = client.New(*invURL, token, client.WithActor("waitroom-load"),
			client.WithHTTPClient(&http.Client{Timeout: *timeout}))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t := newTargets(bases, *balance == "sticky", *conns, *timeout)
	c := newCrowd(cfg, t)
	started := time.Now()
	runCtx, cancel := context.WithTimeout(ctx, *duration)
	c.run(runCtx)
	cancel()
	end := time.Now()

	r := &httpReport{Targets: bases, Balance: *balance, Visitors: *visitors, MaxActive: *maxActive, CapSlack: *slack, OriginMaxActive: -1}
	r.measure(c, end)
	r.WallMS = end.Sub(started).Milliseconds()
	r.Draws = checkDraws(ctx, t, *event, c.visits, *drawWait)
	if cfg.Inventory != nil {
		s := checkSales(ctx, cfg.Inventory, cfg.InventoryEvent, c.orders)
		r.Sales = &s
	}
	if *originStats != "" {
		st, err := fetchOriginStats(*originStats)
		if err != nil {
			fmt.Fprintf(stderr, "waitroom-load http: %v\n", err)
			return 1
		}
		r.OriginMaxActive, r.OriginPerSecond = st.MaxActive, st.PerSecond
		if !st.First.IsZero() {
			r.OriginFromMS = st.First.Sub(c.started).Milliseconds()
		}
		r.CapExceeded = *maxActive > 0 && st.MaxActive > *maxActive+*slack
	}
	r.print(stdout)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "waitroom-load http: %v\n", err)
			return 1
		}
	}
	if *check && len(r.failures()) > 0 {
		return 1
	}
	return 0
}

// fetchOriginStats reads a counting origin's figures.
func fetchOriginStats(u string) (originStats, error) {
	var st originStats
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(u)
	if err != nil {
		return st, fmt.Errorf("origin stats: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("origin stats: %s answered %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("origin stats: %w", err)
	}
	return st, nil
}
