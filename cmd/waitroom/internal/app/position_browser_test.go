package app

import (
	"net/http"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/browsertest"
)

// TestNextInLineInChromium: the first in line has nobody ahead, and the
// real page, fed by the real engine, says so ("You're next", not "1
// person ahead of you"). The demo's event is paused before its sale, so
// the draw orders the one visitor and admits nobody.
func TestNextInLineInChromium(t *testing.T) {
	b := browsertest.Start(t)
	tab := b.NewTab(t, browsertest.AsDesktopChrome())
	d := startDemo(t, 0, 4*time.Second)
	req, _ := http.NewRequest("POST", d.AdminURL+"/admin/v1/events/demo-concert/pause", nil)
	req.Header.Set("Authorization", "Bearer "+d.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("pause: %s", resp.Status)
	}

	browsertest.Navigate(t, tab, d.URL+"events/demo-concert")
	browsertest.WaitFor(t, tab, "the paused queue after the draw, with the position shown",
		`document.getElementById("wr-position").textContent.trim() !== ""`)
	browsertest.Screenshot(t, tab, "next-in-line")
	if got := browsertest.Eval[string](t, tab, `document.getElementById("wr-position").textContent.trim()`); got != "You're next" {
		t.Fatalf("the first in line reads %q, want \"You're next\"", got)
	}
}
