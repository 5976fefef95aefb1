package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/demoshop"
	"github.com/waitroom/waitroom/configs"
	"github.com/waitroom/waitroom/inventory/client"
)

// DemoEvent is the event demo.yaml configures.
const DemoEvent = "demo-concert"

// DefaultDemoListen is where `waitroom demo` serves unless told otherwise.
const DefaultDemoListen = "127.0.0.1:8080"

// DemoOptions configure RunDemo.
type DemoOptions struct {
	// Listen is the address to open in a browser (DefaultDemoListen when
	// ""); the shop, the sidecar and the admin API get free loopback
	// ports unless WAITROOM_DEMO_SHOP, _INVENTORY or _ADMIN name others.
	Listen string
	// Crowd is how many simulated visitors queue alongside the person
	// trying the demo (0: nobody else).
	Crowd int
	// Out receives the welcome text (the URL to open).
	Out io.Writer
	// Logger receives the log.
	Logger *slog.Logger
	// Started, when set, is called once everything serves.
	Started func(d *Demo)
	// Configure, when set, may change the parsed demo.yaml before it is
	// validated (tests shorten the wait for the on-sale).
	Configure func(c *config.Config)
}

// Demo is a running demo: its addresses and the admin token.
type Demo struct {
	URL, AdminURL, AdminToken, ShopURL string
	Waitroom                           *Waitroom
}

// RunDemo runs `waitroom demo` until ctx ends: demo.yaml's waiting room,
// the seat-hold sidecar and the demo ticket shop in one process, with a
// fresh temporary data directory (removed at the end) and random secrets.
func RunDemo(ctx context.Context, opts DemoOptions) error {
	if opts.Listen == "" {
		opts.Listen = DefaultDemoListen
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	dir, err := os.MkdirTemp("", "waitroom-demo-")
	if err != nil {
		return &StartError{Key: "TMPDIR", Value: os.TempDir(), Err: err, Hint: "the demo keeps its data in a temporary directory"}
	}
	defer os.RemoveAll(dir)

	var lns Listeners
	var shopLn net.Listener
	defer func() {
		for _, ln := range []net.Listener{lns.HTTP, lns.Admin, lns.Inventory, shopLn} {
			if ln != nil {
				ln.Close()
			}
		}
	}()
	if lns.HTTP, err = net.Listen("tcp", opts.Listen); err != nil {
		return &StartError{Key: "--listen", Value: opts.Listen, Err: err, Hint: "is another demo running? try --listen 127.0.0.1:0"}
	}
	vars := map[string]string{
		"WAITROOM_DEMO_LISTEN":          lns.HTTP.Addr().String(),
		"WAITROOM_DEMO_DATA":            dir,
		"WAITROOM_DEMO_SIGNING_SECRET":  randomHex(32),
		"WAITROOM_DEMO_INVENTORY_TOKEN": randomHex(24),
		"WAITROOM_DEMO_ADMIN_TOKEN":     randomHex(24),
	}
	for _, l := range []struct {
		name string
		ln   *net.Listener
	}{{"WAITROOM_DEMO_SHOP", &shopLn}, {"WAITROOM_DEMO_INVENTORY", &lns.Inventory}, {"WAITROOM_DEMO_ADMIN", &lns.Admin}} {
		addr := "127.0.0.1:0"
		if v, ok := os.LookupEnv(l.name); ok && v != "" {
			addr = v
		}
		if *l.ln, err = net.Listen("tcp", addr); err != nil {
			return &StartError{Key: l.name, Value: addr, Err: err}
		}
		vars[l.name] = (*l.ln).Addr().String()
	}
	cfg, err := config.Parse(configs.Demo, func(k string) (string, bool) {
		if v, ok := vars[k]; ok {
			return v, true
		}
		return os.LookupEnv(k)
	})
	if err != nil {
		return fmt.Errorf("demo: the embedded demo.yaml: %w", err)
	}
	if opts.Configure != nil {
		opts.Configure(cfg)
	}
	if err := config.ValidateFor(cfg, config.RoleProxy); err != nil {
		return fmt.Errorf("demo: the embedded demo.yaml: %w", err)
	}
	w, err := NewServe(ctx, cfg, log, lns)
	if err != nil {
		return err
	}
	lns = Listeners{} // the Waitroom owns them now

	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- w.Run(runCtx) }()

	inv := client.New("http://"+vars["WAITROOM_DEMO_INVENTORY"], vars["WAITROOM_DEMO_INVENTORY_TOKEN"])
	defer inv.Close()
	shop, err := demoshop.New(demoshop.Options{Inventory: inv, Event: DemoEvent, Name: "Demo Concert",
		Secret: []byte(vars["WAITROOM_DEMO_SIGNING_SECRET"]), Logger: log,
		SessionScript: cfg.Serve.Prefix + "/session.js?event=" + DemoEvent})
	if err != nil {
		stop()
		<-served
		return err
	}
	if err := setupShop(ctx, inv, shop); err != nil {
		stop()
		<-served
		return err
	}
	shopSrv := &http.Server{Handler: shop.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go shopSrv.Serve(shopLn)
	shopLn = nil
	defer shopSrv.Close()

	d := &Demo{URL: "http://" + vars["WAITROOM_DEMO_LISTEN"] + "/", AdminURL: "http://" + vars["WAITROOM_DEMO_ADMIN"],
		AdminToken: vars["WAITROOM_DEMO_ADMIN_TOKEN"], ShopURL: "http://" + vars["WAITROOM_DEMO_SHOP"], Waitroom: w}
	if opts.Out != nil {
		ev := cfg.Events[0]
		fmt.Fprintf(opts.Out, `
  waitroom demo is running: open %s

  The queue for %q is open now and the sale starts in %s: everyone who
  arrives before then is put in a random order by a public draw. Only %d
  visitors shop at once, so open a second browser (or a private window)
  to see the queue from another place in it.%s

  Operator API:  curl -H 'Authorization: Bearer %s' %s/admin/v1/events
  Metrics:       curl -H 'Authorization: Bearer %s' %s/metrics

  Ctrl-C stops the demo (its data is in a temporary directory, removed then).

`, d.URL, ev.Name, time.Until(ev.OnSaleAt.Resolve(w.start)).Round(time.Second), ev.Caps.MaxActive,
			crowdNote(opts.Crowd), d.AdminToken, d.AdminURL, d.AdminToken, d.AdminURL)
	}
	if opts.Crowd > 0 {
		c := &crowd{base: d.URL, event: DemoEvent, size: opts.Crowd, log: log}
		go c.run(runCtx)
	}
	if opts.Started != nil {
		opts.Started(d)
	}
	select {
	case <-ctx.Done():
		stop()
		return <-served
	case err := <-served:
		return err
	}
}

func crowdNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("\n  %d simulated visitors queue with you and buy seats.", n)
}

// setupShop waits for the in-process sidecar and defines the demo event.
func setupShop(ctx context.Context, inv *client.Client, shop *demoshop.Shop) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := inv.Ping(ctx)
		if err == nil {
			return shop.Setup(ctx)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return errors.Join(errors.New("demo: the seat-hold sidecar did not come up"), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("app: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b)
}
