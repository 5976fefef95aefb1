package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/testkit/browsertest"
)

// browserStatus fetches the status answer in the tab, as the page's own
// script would (the ticket cookie is HttpOnly), and decodes it.
func browserStatus(t *testing.T, tab context.Context) map[string]any {
	t.Helper()
	browsertest.Eval[bool](t, tab, `(window.__st = null, fetch("/_wr/api/status?event=demo-concert", {credentials: "same-origin"}).then(r => r.json()).then(j => { window.__st = j; }), true)`)
	browsertest.WaitFor(t, tab, "the status answer", `window.__st !== null`)
	var st map[string]any
	if err := json.Unmarshal([]byte(browsertest.Eval[string](t, tab, `JSON.stringify(window.__st)`)), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// useCode types code into the page's invite field and submits it.
func useCode(t *testing.T, tab context.Context, code string) {
	t.Helper()
	browsertest.WaitFor(t, tab, "the invite field", `!document.getElementById("wr-invite").hidden`)
	browsertest.Eval[bool](t, tab, fmt.Sprintf(`(document.getElementById("wr-invite-code").value = %q, document.querySelector("#wr-invite button").click(), true)`, code))
}

func waitInviteMessage(t *testing.T, tab context.Context, want string) {
	t.Helper()
	browsertest.WaitFor(t, tab, "invite message "+want,
		fmt.Sprintf(`(function(){var e=document.getElementById("wr-invite-msg");return e&&!e.closest("[hidden]")&&e.textContent===%q})()`, want))
}

// TestInviteInChromium: an event with a code-gated lane shows the invite
// field; a wrong code gets a clear error and the visitor keeps their
// place; a right code, typed in lower case with spaces, moves them to
// the presale lane; a second visitor with the same code is told it was
// used; the first one, reloading, keeps their presale place.
func TestInviteInChromium(t *testing.T) {
	b := browsertest.Start(t)
	secret := make([]byte, 32)
	rand.Read(secret)
	d := startDemo(t, 0, time.Minute, func(c *config.Config) {
		c.Events[0].Lanes = append(c.Events[0].Lanes, config.Lane{Name: "presale", Priority: true, InviteSecret: hex.EncodeToString(secret)})
	})
	var id [admission.ShortInviteIDLen]byte
	rand.Read(id[:])
	code := admission.MakeShortInvite([]byte(hex.EncodeToString(secret)), DemoEvent, id)

	fan := b.NewTab(t, browsertest.WithPhone())
	browsertest.Navigate(t, fan, d.URL+"events/demo-concert")
	browsertest.WaitFor(t, fan, "the pre-queue", `document.getElementById("wr-headline").textContent === "You're in the pre-queue"`)
	before := browserStatus(t, fan)
	useCode(t, fan, "AAAA-BBBB-CCCC-DDDD-EEEE-FFFF")
	waitInviteMessage(t, fan, "This code is not valid for this sale. Check it and try again.")
	browsertest.Screenshot(t, fan, "1-wrong-code")
	if st := browserStatus(t, fan); st["visitor"] != before["visitor"] || st["lane"] != "public" {
		t.Fatalf("a wrong code changed the visitor's place: %v, was %v", st, before)
	}

	useCode(t, fan, " "+strings.ToLower(strings.ReplaceAll(code, "-", " "))+" ")
	waitInviteMessage(t, fan, "Code accepted: you are in the presale queue.")
	browsertest.WaitFor(t, fan, "the field hidden in the presale lane", `document.getElementById("wr-invite").hidden`)
	browsertest.Screenshot(t, fan, "2-code-accepted")
	presale := browserStatus(t, fan)
	if presale["lane"] != "presale" || presale["visitor"] == before["visitor"] {
		t.Fatalf("after the code: %v", presale)
	}

	other := b.NewTab(t)
	browsertest.Navigate(t, other, d.URL+"events/demo-concert")
	useCode(t, other, code)
	waitInviteMessage(t, other, "This code has already been used by someone else.")
	browsertest.Screenshot(t, other, "3-code-used")
	if st := browserStatus(t, other); st["lane"] != "public" {
		t.Fatalf("the second visitor: %v", st)
	}

	// A link with the code in its fragment fills in the field and uses it.
	rand.Read(id[:])
	linked := b.NewTab(t)
	browsertest.Navigate(t, linked, d.URL+"events/demo-concert#invite="+admission.MakeShortInvite([]byte(hex.EncodeToString(secret)), DemoEvent, id))
	waitInviteMessage(t, linked, "Code accepted: you are in the presale queue.")

	browsertest.Navigate(t, fan, d.URL+"events/demo-concert")
	browsertest.WaitFor(t, fan, "the pre-queue again", `document.getElementById("wr-headline").textContent === "You're in the pre-queue"`)
	if st := browserStatus(t, fan); st["lane"] != "presale" || st["visitor"] != presale["visitor"] {
		t.Fatalf("after a reload: %v, was %v", st, presale)
	}
	if !browsertest.Eval[bool](t, fan, `document.getElementById("wr-invite").hidden`) {
		t.Error("the invite field shows for a visitor already in the presale")
	}
	waitInviteMessage(t, fan, "Code accepted: you are in the presale queue.")
}

// TestDrawPageInChromium: the draw page, where the room's "Check the draw"
// link goes (in a tab of its own, so the room keeps the place), shows the commitment (and that this browser saw the same
// one before the draw), checks the seed, and finds the visitor's entry
// in a draw of several audit pages, at the place the published order
// gives.
func TestDrawPageInChromium(t *testing.T) {
	b := browsertest.Start(t)
	d := startDemo(t, 0, 12*time.Second)
	tab := b.NewTab(t, browsertest.AsDesktopChrome())
	browsertest.Navigate(t, tab, d.URL+"events/demo-concert")
	browsertest.WaitFor(t, tab, "the pre-queue", `document.getElementById("wr-headline").textContent === "You're in the pre-queue"`)
	if !browsertest.Eval[bool](t, tab, `document.getElementById("wr-invite").hidden`) {
		t.Error("the invite field shows for an event without presale lanes")
	}
	// Before the draw: the page shows the commitment, and remembers it.
	browsertest.Navigate(t, tab, d.URL+"_wr/draw/demo-concert/0")
	browsertest.WaitFor(t, tab, "not drawn yet", `document.getElementById("dp-status").textContent.indexOf("has not been drawn yet") >= 0`)
	seenCommitment := browsertest.Eval[string](t, tab, `document.getElementById("dp-commitment").textContent`)
	browsertest.Screenshot(t, tab, "1-before-the-draw")

	// Enough others that the draw spans two audit pages (250 each).
	for i := range 300 {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
		req, _ := http.NewRequest("POST", d.URL+"_wr/api/join", strings.NewReader(`{"event":"demo-concert"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "visitor-"+strconv.Itoa(i))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			time.Sleep(time.Second)
			continue
		}
		if resp.StatusCode != 200 {
			t.Fatalf("join %d: %s", i, resp.Status)
		}
	}
	// Nobody is admitted: the visitor stays in the room to follow the link.
	req, _ := http.NewRequest("POST", d.AdminURL+"/admin/v1/events/demo-concert/pause", nil)
	req.Header.Set("Authorization", "Bearer "+d.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	browsertest.Navigate(t, tab, d.URL+"events/demo-concert")
	browsertest.WaitFor(t, tab, "the draw's link", `(function(){var a=document.getElementById("wr-audit");return a&&!a.hidden&&!a.closest("[hidden]")&&document.getElementById("wr-position").textContent!==""})()`)
	if href := browsertest.Eval[string](t, tab, `document.getElementById("wr-audit").getAttribute("href") + " " + document.getElementById("wr-audit").target`); href != "/_wr/draw/demo-concert/0 _blank" {
		t.Fatalf("Check the draw links to %q, want the draw page in a tab of its own", href)
	}
	browsertest.Navigate(t, tab, d.URL+"_wr/draw/demo-concert/0")
	browsertest.WaitFor(t, tab, "the seed checked", `document.getElementById("dp-seed-check").textContent === "✓ Your browser computed its SHA-256: it matches the commitment."`)
	if got := browsertest.Eval[string](t, tab, `document.getElementById("dp-seen").textContent`); !strings.HasPrefix(got, "Your browser saw this same commitment at ") {
		t.Errorf("the commitment seen before the draw: %q", got)
	}
	if c := browsertest.Eval[string](t, tab, `document.getElementById("dp-commitment").textContent`); c != seenCommitment {
		t.Errorf("commitment %s after the draw, %s before", c, seenCommitment)
	}
	if href := browsertest.Eval[string](t, tab, `document.getElementById("dp-json").getAttribute("href")`); href != "/_wr/api/draws/demo-concert/0" {
		t.Errorf("the JSON link goes to %q", href)
	}
	browsertest.Eval[bool](t, tab, `(document.getElementById("dp-find-button").click(), true)`)
	browsertest.WaitFor(t, tab, "the visitor's entry", `document.getElementById("dp-result").textContent.indexOf("You are number") >= 0`)
	browsertest.Screenshot(t, tab, "2-found")
	found := browsertest.Eval[string](t, tab, `document.getElementById("dp-result").textContent`)
	checked := browsertest.Eval[string](t, tab, `document.getElementById("dp-checked").textContent`)
	t.Logf("%s / %s", found, checked)

	// The page's answer is the published order's.
	st := browserStatus(t, tab)
	vid, _ := hex.DecodeString(st["visitor"].(string))
	sum := sha256.Sum256(vid)
	mine := hex.EncodeToString(sum[:])
	var all []string
	var count int
	for off := 0; ; {
		resp, err := http.Get(fmt.Sprintf("%s_wr/api/draws/demo-concert/0?offset=%d&limit=1000", d.URL, off))
		if err != nil {
			t.Fatal(err)
		}
		var a struct {
			Count  int
			Hashes []string
			Next   *int
		}
		json.NewDecoder(resp.Body).Decode(&a)
		resp.Body.Close()
		all, count = append(all, a.Hashes...), a.Count
		if a.Next == nil {
			break
		}
		off = *a.Next
	}
	place := -1
	for i, h := range all {
		if h == mine {
			place = i + 1
		}
	}
	if count <= 250 || place < 0 {
		t.Fatalf("the draw has %d entries; the visitor's is at %d", count, place)
	}
	want := fmt.Sprintf("Your entry is %s. You are number %s of %s in this draw", mine, group(place), group(count))
	if !strings.HasPrefix(found, want) {
		t.Errorf("the page says %q, want %q", found, want)
	}
	if !regexp.MustCompile(`^✓ Your browser recomputed the order of the [0-9,]+ entries it loaded around yours`).MatchString(checked) {
		t.Errorf("order check: %q", checked)
	}
}

// group writes n as en-US Intl.NumberFormat does.
func group(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
