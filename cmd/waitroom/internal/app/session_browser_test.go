package app

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/testkit/browsertest"
)

// TestSessionRenewalInChromium is a long checkout in a real browser, on
// the demo with short sessions (8 s, at most 24 s): a visitor who keeps
// browsing stays in well past session_duration and is warned by the
// session banner, first that browsing keeps them in, then, at the
// maximum, that the session ends; one who idles is let go when their pass
// runs out, and their banner says so. The timings leave seconds of slack:
// a pass is renewed once less than 4 s are left, and each step waits for
// what it checks rather than for a fixed time.
func TestSessionRenewalInChromium(t *testing.T) {
	const (
		session    = 8 * time.Second
		maxSession = 24 * time.Second
	)
	b := browsertest.Start(t)
	d := startDemo(t, 0, 4*time.Second, func(c *config.Config) {
		e := &c.Events[0]
		e.SessionDuration, e.MaxSession, e.NoShowGrace = config.Duration(session), config.Duration(maxSession), config.Duration(2*time.Second)
	})
	shop := d.URL + "events/demo-concert"
	onShop := `location.pathname === "/events/demo-concert" && document.title.includes("Choose your tickets")`
	// bannerIs is true when the banner shows text in state ("renews",
	// "final" or "ended").
	bannerIs := func(state, text string) string {
		return `(() => { const b = document.getElementById("wr-session-banner");
			return !!b && b.style.display !== "none" && b.dataset.state === "` + state + `" && b.textContent.includes("` + text + `") })()`
	}
	banner := func(tab context.Context) string {
		return browsertest.Eval[string](t, tab, `(() => { const b = document.getElementById("wr-session-banner");
			return b && b.style.display !== "none" && b.getAttribute("role") === "status" ? b.textContent : "" })()`)
	}

	active := b.NewTab(t, browsertest.AsDesktopChrome())
	idle := b.NewTab(t)
	browsertest.Navigate(t, active, shop)
	browsertest.WaitFor(t, active, "the active visitor admitted to the shop", onShop)
	admitted := time.Now()
	browsertest.Navigate(t, idle, shop)
	browsertest.WaitFor(t, idle, "the idle visitor admitted to the shop", onShop)

	// With a session this short the banner is up at once: browsing keeps them in.
	const keep, final, ended = "Keep browsing to stay in", "Your session ends in about a minute.", "Your session has ended."
	for _, tab := range []context.Context{active, idle} {
		browsertest.WaitFor(t, tab, "the session banner", bannerIs("renews", keep))
	}
	if got := banner(active); got == "" {
		t.Fatal("the banner is not shown as a status")
	}
	browsertest.Screenshot(t, active, "session-banner")

	// Keep browsing for more than twice the session: never the queue.
	loads := 0
	for time.Since(admitted) < maxSession-session/2+time.Second {
		browsertest.Navigate(t, active, shop)
		if !browsertest.Eval[bool](t, active, onShop) {
			title := browsertest.Eval[string](t, active, `document.title`)
			t.Fatalf("after %v of browsing (%d pages) the visitor was sent to %q", time.Since(admitted).Round(time.Millisecond), loads, title)
		}
		loads++
		time.Sleep(time.Second)
	}
	t.Logf("%d pages over %v, the session lasts %v", loads, time.Since(admitted).Round(time.Millisecond), session)
	if time.Since(admitted) < 2*session {
		t.Fatalf("browsed for only %v", time.Since(admitted))
	}
	// The pass is at its session's end now: the banner no longer promises more.
	browsertest.Navigate(t, active, shop)
	if browsertest.Eval[bool](t, active, onShop) {
		browsertest.WaitFor(t, active, "the banner at the session's maximum", bannerIs("final", final))
		browsertest.Screenshot(t, active, "session-final")
	}

	// The idle visitor's pass ran out long ago: their banner says so, and
	// the next page is the waiting room, which says their place expired.
	browsertest.WaitFor(t, idle, "the idle visitor's banner after the end", bannerIs("ended", ended))
	browsertest.Navigate(t, idle, shop)
	browsertest.WaitFor(t, idle, "the idle visitor back in the waiting room",
		`!!document.getElementById("wr-headline") && document.getElementById("wr-headline").textContent.includes("Your place has expired")`)
	browsertest.Screenshot(t, idle, "idle-session-ended")

	// Past the maximum the active visitor is let go too, however active.
	time.Sleep(time.Until(admitted.Add(maxSession + time.Second)))
	browsertest.Navigate(t, active, shop)
	browsertest.WaitFor(t, active, "the active visitor let go after the maximum session",
		`!!document.getElementById("wr-headline") && document.getElementById("wr-headline").textContent.includes("Your place has expired")`)
}
