package app

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/testkit/browsertest"
)

// TestOnePlacePerAccountInChromium: two browsers, each a fresh profile,
// logged in to the shop as the same account, join the queue: both hold
// the one place (same visitor, same tranche), each with a ticket of its
// own. A third browser context, not logged in, is asked to log in, with
// a link to the shop's login page.
func TestOnePlacePerAccountInChromium(t *testing.T) {
	secret := make([]byte, 32)
	rand.Read(secret)
	d := startDemo(t, 0, time.Minute, func(c *config.Config) {
		c.Identity = config.DefaultIdentity()
		c.Identity.Cookie, c.Identity.Secret, c.Identity.LoginURL = "shop_id", hex.EncodeToString(secret), "/login"
		c.Events[0].Identity = config.IdentityRequired
	})
	identity := admission.MakeIdentity([]byte(hex.EncodeToString(secret)), "alice@example.com", time.Now().Add(time.Hour))
	var statuses []map[string]any
	for i, b := range []*browsertest.Browser{browsertest.Start(t), browsertest.Start(t)} {
		opts := []browsertest.TabOption{browsertest.AsDesktopChrome()}
		if i == 1 {
			opts = append(opts, browsertest.WithPhone())
		}
		tab := b.NewTab(t, opts...)
		// The shop logs alice in: its identity cookie on the site.
		browsertest.Navigate(t, tab, d.URL)
		browsertest.Eval[bool](t, tab, fmt.Sprintf(`(document.cookie = "shop_id=%s; path=/", true)`, identity))
		browsertest.Navigate(t, tab, d.URL+"events/demo-concert")
		browsertest.WaitFor(t, tab, "a place in the pre-queue", `document.getElementById("wr-headline").textContent === "You're in the pre-queue"`)
		browsertest.Screenshot(t, tab, fmt.Sprintf("account-browser-%d", i+1))
		statuses = append(statuses, browserStatus(t, tab))
	}
	a, b := statuses[0], statuses[1]
	if a["visitor"] == nil || a["visitor"] != b["visitor"] || a["tranche"] != b["tranche"] || a["status"] != b["status"] {
		t.Fatalf("alice's two browsers: %v / %v", a, b)
	}

	anon := browsertest.Start(t).NewTab(t, browsertest.AsDesktopChrome())
	browsertest.Navigate(t, anon, d.URL+"events/demo-concert")
	browsertest.WaitFor(t, anon, "the login prompt", `!document.getElementById("wr-login").hidden`)
	browsertest.Screenshot(t, anon, "account-login-prompt")
	if href := browsertest.Eval[string](t, anon, `document.getElementById("wr-login").href`); !strings.HasSuffix(href, "/login") {
		t.Fatalf("login link %q", href)
	}
	if h := browsertest.Eval[string](t, anon, `document.getElementById("wr-headline").textContent`); h != "Log in to join" {
		t.Fatalf("headline %q", h)
	}
}
