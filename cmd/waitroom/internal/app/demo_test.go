package app

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/testkit/browsertest"
)

// startDemo runs the demo with the on-sale a few seconds away and returns
// it once it serves.
func startDemo(t *testing.T, crowd int, onSale time.Duration, configure ...func(*config.Config)) *Demo {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan *Demo, 1)
	done := make(chan error, 1)
	go func() {
		done <- RunDemo(ctx, DemoOptions{Listen: "127.0.0.1:0", Crowd: crowd,
			Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
			Started: func(d *Demo) { started <- d },
			Configure: func(c *config.Config) {
				c.Events[0].OnSaleAt = config.AfterStart(onSale)
				for _, f := range configure {
					f(c)
				}
			}})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the demo stopped with %v", err)
		}
	})
	select {
	case d := <-started:
		return d
	case err := <-done:
		t.Fatalf("the demo did not start: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the demo did not start within 30 s")
	}
	return nil
}

// TestDemoInChromium is the whole flow in a real browser: the waiting
// room, the draw, admission, the shop behind the proxy, a hold, the
// payment and the ticket.
func TestDemoInChromium(t *testing.T) {
	b := browsertest.Start(t)
	tab := b.NewTab(t, browsertest.WithPhone())
	d := startDemo(t, 0, 6*time.Second)

	browsertest.Navigate(t, tab, d.URL+"events/demo-concert")
	// The page script retitles the tab with the state, so the waiting room
	// is recognised by its own elements: the countdown to the on-sale.
	browsertest.WaitFor(t, tab, "the waiting room", `!!document.getElementById("wr-headline") && document.body.innerText.includes("Demo Concert")`)
	browsertest.WaitFor(t, tab, "the countdown to the on-sale", `!document.getElementById("wr-countdown").hidden`)
	browsertest.Screenshot(t, tab, "1-waiting-room")
	browsertest.WaitFor(t, tab, "the shop after admission",
		`location.pathname === "/events/demo-concert" && document.title.includes("Choose your tickets")`)
	browsertest.Screenshot(t, tab, "2-shop")

	// Best available seats, then pay.
	browsertest.Eval[bool](t, tab, `(() => { document.querySelector('input[name=mode][value=best]').form.submit(); return true })()`)
	browsertest.WaitFor(t, tab, "the checkout", `location.pathname.startsWith("/checkout/") && !!document.querySelector("form.card")`)
	browsertest.Screenshot(t, tab, "3-checkout")
	browsertest.Eval[bool](t, tab, `(() => { document.querySelector("form.card").submit(); return true })()`)
	browsertest.WaitFor(t, tab, "the ticket", `location.pathname.startsWith("/tickets/") && !!document.querySelector("svg")`)
	browsertest.Screenshot(t, tab, "4-ticket")

	// The operator sees a completion and a sold seat's visitor.
	m := metrics(t, d)
	for _, want := range []string{`waitroom_origin_completions_total{event="demo-concert"} 1`,
		`waitroom_passes_issued_total{event="demo-concert"}`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
