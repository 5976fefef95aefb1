// Tests of the events' validation (validate_events.go).

package config

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestValidateEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(e *Event)
		want   []string
	}{
		{"relative schedule", func(e *Event) {
			e.QueueOpensAt, e.OnSaleAt, e.ClosesAt = AfterStart(0), AfterStart(30*time.Second), AfterStart(time.Hour)
		}, nil},
		{"mixed kinds are checked at start", func(e *Event) {
			e.QueueOpensAt, e.ClosesAt = AfterStart(0), AfterStart(time.Hour)
		}, nil},
		{"no pre-queue", func(e *Event) { e.QueueOpensAt = Instant{} }, nil},
		{"no on-sale with a pre-queue", func(e *Event) { e.OnSaleAt = Instant{} }, []string{
			"events[0].on_sale_at: must be set with queue_opens_at: when the pre-queue is drawn (an RFC 3339 time such as 2027-03-01T10:00:00Z, or now+30s), or remove queue_opens_at to be open from the start"}},
		{"open from the start", func(e *Event) { e.OnSaleAt, e.QueueOpensAt = Instant{}, Instant{} }, nil},
		{"threshold, open from the start", func(e *Event) { e.Mode, e.OnSaleAt, e.QueueOpensAt = ModeThreshold, Instant{}, Instant{} }, nil},
		{"scheduled without an on-sale", func(e *Event) { e.Mode, e.OnSaleAt, e.QueueOpensAt = ModeScheduled, Instant{}, Instant{} }, []string{
			"events[0].on_sale_at: must be set for mode: scheduled: when the pre-queue is drawn and the sale starts (an RFC 3339 time such as 2027-03-01T10:00:00Z, or now+30s)"}},
		{"expected rate", func(e *Event) { e.Controller.ExpectedRate = 200 }, nil},
		{"negative expected rate", func(e *Event) { e.Controller.ExpectedRate = -1 }, []string{
			"events[0].controller.expected_rate: must be 0 (unknown) or the visitors a minute the origin is expected to take, such as 200 (got -1)"}},
		{"out of order", func(e *Event) {
			e.QueueOpensAt = At(onSale.Add(time.Second))
			e.ClosesAt = At(onSale)
		}, []string{
			"events[0].queue_opens_at: is after on_sale_at (2027-03-01T10:00:00Z): the queue must open before the sale, or at it",
			"events[0].closes_at: must be after on_sale_at (2027-03-01T10:00:00Z)"}},
		{"relative out of order", func(e *Event) {
			e.QueueOpensAt, e.OnSaleAt, e.ClosesAt = AfterStart(time.Minute), AfterStart(30*time.Second), AfterStart(0)
		}, []string{
			"events[0].queue_opens_at: is after on_sale_at (now+30s): the queue must open before the sale, or at it",
			"events[0].closes_at: must be after on_sale_at (now+30s)"}},
		{"opens at the sale", func(e *Event) { e.QueueOpensAt = e.OnSaleAt }, nil},
		{"names and ids", func(e *Event) {
			e.ID = "Summer"
			e.Name = "a\x00b"
		}, []string{
			"routes[0].event: names no event in events (known: Summer)",
			`events[0].id: must be 1 to 64 characters from [a-z0-9_-] (got "Summer")`,
			"events[0].name: must be at most 200 characters of text, without control characters"}},
		{"long name", func(e *Event) { e.Name = strings.Repeat("ü", MaxEventNameLength) }, nil},
		{"landing paths", func(e *Event) { e.LandingPath = "https://evil.example/" }, []string{
			`events[0].landing_path: must be a path on this site, such as /events/summer ("https://evil.example/" does not start with /)`}},
		{"landing path with a backslash", func(e *Event) { e.LandingPath = `/\evil.example` }, []string{
			`events[0].landing_path: must be a path on this site, such as /events/summer ("/\\evil.example" holds a space, control character or backslash)`}},
		{"landing path with a query", func(e *Event) { e.LandingPath = "/events/summer?from=queue" }, nil},
		{"landing path with a fragment", func(e *Event) { e.LandingPath = "/events#top" }, []string{
			`events[0].landing_path: must be a path on this site, such as /events/summer ("/events#top" is not a plain path)`}},
		{"durations and enums", func(e *Event) {
			e.Tranche, e.SessionDuration, e.NoShowGrace = 0, -1, 0
			e.PositionDisplay, e.Challenge.Mode = "rounded", "pow"
		}, []string{
			"events[0].tranche: must be more than 0, such as 1s (got 0s)",
			"events[0].session_duration: must be more than 0, such as 1s (got -1ns)",
			"events[0].no_show_grace: must be more than 0, such as 1s (got 0s)",
			`events[0].position_display: must be exact, approximate or hidden (got "rounded")`,
			`events[0].challenge.mode: must be off, on or dry_run (got "pow")`}},
		{"max session below the session", func(e *Event) {
			e.SessionDuration, e.MaxSession = Duration(10*time.Minute), Duration(5*time.Minute)
		}, []string{"events[0].max_session: must be 0 (3 × session_duration) or at least session_duration (10m), got 5m"}},
		{"negative max session", func(e *Event) { e.MaxSession = -1 }, []string{
			"events[0].max_session: must be 0 (3 × session_duration) or at least session_duration (10m), got -1ns"}},
		{"max session equal to the session", func(e *Event) { e.MaxSession = e.SessionDuration }, nil},
		{"inventory link without a sidecar", func(e *Event) { e.InventoryEvent = "summer-2027" }, []string{
			"events[0].inventory_event: needs a sidecar to read remaining seats from: set serve.inventory.url, or serve.with_inventory: true"}},
		{"inventory link with a bad id", func(e *Event) { e.InventoryEvent = "-x" }, []string{
			`events[0].inventory_event: must be a sidecar event id: 1 to 64 characters from [A-Za-z0-9_.-], starting with a letter or digit (got "-x")`}},
		{"numbers", func(e *Event) {
			e.VisitorsPerSeat = 0
			e.Caps = Caps{MaxActive: -1, MaxNewPerMinute: -1}
		}, []string{
			"events[0].visitors_per_seat: must be more than 0, such as 1.5 (got 0)",
			"events[0].caps.max_active: must be 0 or more (got -1)",
			"events[0].caps.max_new_per_minute: must be 0 or more (got -1)"}},
		{"infinite visitors per seat", func(e *Event) { e.VisitorsPerSeat = math.Inf(1) }, []string{
			"events[0].visitors_per_seat: must be more than 0, such as 1.5 (got +Inf)"}},
		{"controller", func(e *Event) {
			e.Controller = Controller{Tick: 0, TargetP95: 0, TargetErrorRate: 1, InitialActive: 5, MinActive: 6, Increase: -1, Decrease: 0}
		}, []string{
			"events[0].controller.tick: must be more than 0, such as 1s (got 0s)",
			"events[0].controller.target_p95: must be more than 0, such as 1s (got 0s)",
			"events[0].controller.target_error_rate: must be between 0 and 1, exclusive (got 1)",
			"events[0].controller.min_active: must not be more than initial_active (5) (got 6)",
			"events[0].controller.increase: must be 0 (no bound) or more (got -1)",
			"events[0].controller.decrease: must be between 0 and 1, exclusive (got 0)"}},
		{"controller zeros", func(e *Event) { e.Controller.InitialActive, e.Controller.MinActive = 0, 0 }, []string{
			"events[0].controller.initial_active: must be 1 or more (got 0)",
			"events[0].controller.min_active: must be 1 or more (got 0)"}},
		{"lanes", func(e *Event) {
			e.Lanes = []Lane{
				{Name: "presale", Priority: true, InviteSecret: testSecret},
				{Name: "fanclub", Share: 0.3, AccountSecret: testSecret, AllowlistFile: "/etc/waitroom/fans.txt"},
				{Name: "public", Share: 0.7},
			}
		}, nil},
		{"lane problems", func(e *Event) {
			e.Lanes = []Lane{
				{Name: "presale", Priority: true, Share: 0.5},
				{Name: "presale", InviteSecret: "short-SECRET", AllowlistFile: "f"},
				{Name: "Fans", Share: 1.5, AccountSecret: " " + testSecret},
				{Name: "public", InviteSecret: testSecret, AccountSecret: testSecret, AllowlistFile: "f"},
			}
		}, []string{
			"events[0].lanes[0].share: is set on a priority lane, which is served before the others: share applies to non-priority lanes only",
			"events[0].lanes[0]: has no way in: set invite_secret (invite codes) or account_secret (account proofs from the origin)",
			"events[0].lanes[1].name: repeats lanes[0].name",
			"events[0].lanes[1].invite_secret: must be at least 32 bytes (got 12); openssl rand -hex 32 makes a good one",
			"events[0].lanes[1].allowlist_file: needs account_secret: the allowlist is checked against proven account ids",
			`events[0].lanes[2].name: must be 1 to 64 characters from [a-z0-9_-] (got "Fans")`,
			"events[0].lanes[2].share: must be between 0 and 1 (got 1.5)",
			"events[0].lanes[2].account_secret: starts or ends with white space (a trailing newline from a secrets file?)",
			"events[0].lanes[3].invite_secret: is set on the public lane, which everyone may join",
			"events[0].lanes[3].account_secret: is set on the public lane, which everyone may join",
			"events[0].lanes[3].allowlist_file: is set on the public lane, which everyone may join"}},
		{"page", func(e *Event) {
			e.Page = Page{
				LogoURL:         "https://cdn.example.com/logo.svg",
				Colors:          Colors{Background: "#fff", Text: "#1A2B3C", Accent: "#e4002b"},
				DefaultLanguage: LangGerman,
				Texts:           map[Language]map[string]string{"de": {"title": "Sommertour", "draw.explain": "Die Reihenfolge wird gelost."}, "es": {}},
				TemplateDir:     "/etc/waitroom/templates/summer",
			}
		}, nil},
		{"page on this site", func(e *Event) { e.Page.LogoURL = "/static/logo.png" }, nil},
		{"page problems", func(e *Event) {
			e.Page = Page{
				LogoURL:         "http://cdn.example.com/logo.svg",
				Colors:          Colors{Background: "white", Text: "#12345", Accent: "#fff;}body{x:y"},
				DefaultLanguage: "ru",
				Texts:           map[Language]map[string]string{"ru": {"title": "x"}, "en": {"Title": "x", "ok": "\xff"}},
			}
		}, []string{
			`events[0].page.logo_url: must be an https:// URL or a path on this site (got "http://cdn.example.com/logo.svg")`,
			`events[0].page.colors.background: must be a colour such as #1a2b3c or #abc (got "white")`,
			`events[0].page.colors.text: must be a colour such as #1a2b3c or #abc (got "#12345")`,
			`events[0].page.colors.accent: must be a colour such as #1a2b3c or #abc (got "#fff;}body{x:y")`,
			`events[0].page.default_language: must be en, ar, de, es, fr, it, ja, ko, nl, pl, pt, sv, tr or zh (got "ru")`,
			`events[0].page.texts.en: has the key "Title": text keys are 1 to 64 characters from [a-z0-9_.]`,
			"events[0].page.texts.en.ok: must be valid UTF-8 text",
			"events[0].page.texts.ru: is not a language of the page: use en, ar, de, es, fr, it, ja, ko, nl, pl, pt, sv, tr or zh"}},
		{"logo breaking out of CSS", func(e *Event) { e.Page.LogoURL = "https://x.example/a.png)" }, []string{
			`events[0].page.logo_url: must be an https:// URL or a path on this site ("https://x.example/a.png)" holds a quote, bracket, backslash, space or control character)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validProxy()
			tt.change(&c.Events[0])
			wantProblems(t, ValidateFor(c, RoleProxy), tt.want...)
		})
	}
}

func TestValidateEventIDs(t *testing.T) {
	t.Parallel()
	c := validProxy()
	c.Events = append(c.Events, c.Events[0])
	wantProblems(t, ValidateFor(c, RoleProxy), "events[1].id: repeats events[0].id")
}

// TestValidateProxyHidesSecrets checks that no secret of the proxy's
// sections reaches a message, whatever is wrong with it.
