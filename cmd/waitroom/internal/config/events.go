package config

import (
	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/static"
)

// Event is one on-sale with a waiting room.
type Event struct {
	// Event id, in URLs, cookies, metrics and the draw audit; 1 to 64
	// characters from [a-z0-9_-], unique.
	ID string `yaml:"id"`
	// Name shown on the waiting-room page; empty shows the id.
	Name string `yaml:"name"`
	// How the room admits: always (everyone queues; today's behaviour,
	// with a pre-queue when queue_opens_at is before on_sale_at),
	// threshold (visitors pass straight through while the origin is
	// healthy, the active visitors are below the controller's limit and
	// caps.max_active, and nobody is queued; the room queues only once a
	// limit is crossed, and drains back to pass-through once the queue
	// is empty, without reordering anyone queued) or scheduled (a
	// pre-queue drawn at on_sale_at, which must be set). Operators can
	// switch it at run time (PUT /admin/v1/events/{id}/mode) without
	// anyone queued losing their place.
	Mode EventMode `yaml:"mode"`
	// When visitors may start to join: an RFC 3339 time, "now" or
	// "now+D" (relative to the process start, for demos). Everyone who
	// joins before on_sale_at is drawn in one random order at the on-sale.
	// Empty is on_sale_at (no pre-queue). An absolute and a relative time
	// are ordered against each other at start-up, not by check-config.
	QueueOpensAt Instant `yaml:"queue_opens_at"`
	// When the sale starts: the pre-queue is drawn and admission begins.
	// Same forms as queue_opens_at, and not before it. Required for
	// mode: scheduled and with queue_opens_at; empty (always, threshold)
	// is open from the start, with nobody pre-queued.
	OnSaleAt Instant `yaml:"on_sale_at"`
	// When the queue closes for good; after on_sale_at. Empty is never.
	ClosesAt Instant `yaml:"closes_at"`
	// Where admitted visitors go when they brought no return path of their
	// own: a path on this site, such as /events/summer.
	LandingPath string `yaml:"landing_path"`
	// Arrivals after the on-sale are grouped into tranches this long; each
	// tranche is drawn in a random order and served after the ones before
	// it, so arriving within the same tranche gives no advantage.
	Tranche Duration `yaml:"tranche"`
	// How long a pass is valid: the time an admitted visitor has to buy,
	// slid forward while they keep browsing (up to max_session).
	SessionDuration Duration `yaml:"session_duration"`
	// The longest an admitted visitor's session may last while they keep
	// browsing: a pass due to expire within half a session_duration is
	// renewed on their next request to the origin, by up to
	// session_duration, but never beyond this long after they were
	// admitted. 0 is 3 × session_duration; equal to session_duration turns
	// renewal off. Otherwise at least session_duration.
	MaxSession Duration `yaml:"max_session"`
	// How long a visitor whose turn came may take to come back (poll and
	// take the pass) before their place goes to the next visitor. A
	// visitor whose pass has not gone through the gate by then (never
	// taken, or taken and never used) counts as a no-show in the measured
	// no-show rate the controller compensates for.
	NoShowGrace Duration `yaml:"no_show_grace"`
	// How long an admitted visitor's pass keeps working after their
	// origin answered X-Waitroom-Complete: 1 (a purchase done), so the
	// last pages of it still load. From that answer on no status poll
	// mints them a new pass; after the grace their pass stops, on every
	// replica. More than 0.
	CompleteGrace Duration `yaml:"complete_grace"`
	// What the page shows of a visitor's place: exact (the number of
	// people ahead), approximate (rounded, "about 4,800 ahead of you") or
	// hidden (only the estimated wait). Exact positions invite gaming.
	PositionDisplay PositionDisplay `yaml:"position_display"`
	// Bot defence at join: off, on, dry_run, or a mapping with the mode,
	// score bands, proof-of-work sizes and CAPTCHA provider (see
	// EventChallenge). Off lets anyone join with a plain POST.
	Challenge EventChallenge `yaml:"challenge"`
	// One place per account: off (every join is a new place), optional
	// (a join with a valid identity, see the identity section, gets the
	// account's first place back; one without joins anonymously) or
	// required (a join without a valid identity is refused with 401
	// login_required or identity_invalid, and the page asks the visitor to
	// log in).
	Identity IdentityMode `yaml:"identity"`
	// Id of the event in the seat-hold sidecar, linking the queue to its
	// remaining seats: admission is bounded by them and the queue closes
	// as sold out when none are left. Needs serve.inventory.url or
	// serve.with_inventory; empty links nothing.
	InventoryEvent string `yaml:"inventory_event"`
	// Visitors admitted and not yet done per remaining seat (with
	// inventory_event): more than 1 allows for those who leave without
	// buying. More than 0.
	VisitorsPerSeat float64 `yaml:"visitors_per_seat"`
	// Hard limits on admission, whatever the controller measures.
	Caps Caps `yaml:"caps"`
	// The controller that sizes admission from the origin's measured
	// latency, capacity and errors: by Little's law, the active visitors
	// the origin carries at its measured capacity with a short line, met
	// every second, with a slow start to find that capacity.
	Controller Controller `yaml:"controller"`
	// Lanes besides the implicit public lane, such as a presale for
	// invited fans. A lane named public sets the public lane's priority
	// and share (and takes no credentials).
	Lanes []Lane `yaml:"lanes"`
	// Branding and texts of the waiting-room page.
	Page Page `yaml:"page"`
}

// EventMode is a value of events[].mode.
type EventMode string

// Values of events[].mode.
const (
	ModeAlways    EventMode = "always"
	ModeThreshold EventMode = "threshold"
	ModeScheduled EventMode = "scheduled"
)

// PositionDisplay is a value of events[].position_display.
type PositionDisplay string

// Values of events[].position_display.
const (
	PositionExact       PositionDisplay = "exact"
	PositionApproximate PositionDisplay = "approximate"
	PositionHidden      PositionDisplay = "hidden"
)

// Caps are hard limits on an event's admission.
type Caps struct {
	// Most visitors holding a valid pass at once; 0 means no cap.
	MaxActive int `yaml:"max_active"`
	// Most visitors newly admitted per minute; 0 means no cap.
	MaxNewPerMinute int `yaml:"max_new_per_minute"`
}

// Controller tunes the admission controller of one event.
type Controller struct {
	// How often the controller measures the origin and admits more.
	Tick Duration `yaml:"tick"`
	// Origin latency (95th percentile of admitted visitors' requests)
	// that cuts the limit when crossed, whatever the origin's baseline;
	// below it the controller keeps the origin's mean latency near its
	// own unloaded baseline.
	TargetP95 Duration `yaml:"target_p95"`
	// Share of origin responses that may be 5xx or time out (0 to 1,
	// exclusive).
	TargetErrorRate float64 `yaml:"target_error_rate"`
	// Active visitors allowed at the start, before anything is measured;
	// from there the limit doubles per round while the origin answers at
	// its baseline (a slow start).
	InitialActive int `yaml:"initial_active"`
	// The active-visitor limit never goes below this; at least 1 and at
	// most initial_active.
	MinActive int `yaml:"min_active"`
	// Most visitors the target may grow by per tick while the origin
	// answers at its baseline; 0 means no bound beyond the controller's
	// own (doubling per round until the origin first queues, then 10 %
	// after two calm ticks).
	Increase int `yaml:"increase"`
	// The deepest one tick may cut the target to, as a factor of the
	// last (0 to 1, exclusive): a single bad second never takes more than
	// this off.
	Decrease float64 `yaml:"decrease"`
	// Visitors a minute the operator expects the origin to take; 0 is
	// unknown. Before the admission rate is measured (the pre-queue and
	// the first minutes of a sale) the page's wait estimate comes from
	// it, shown as a wider range; without it, from the pace so far or
	// initial_active over session_duration.
	ExpectedRate float64 `yaml:"expected_rate"`
}

// Lane is a queue within an event with its own numbers and its own share
// of admissions, such as a presale.
type Lane struct {
	// Lane name, in join requests and tickets; 1 to 64 characters from
	// [a-z0-9_-], unique within the event. "public" configures the
	// implicit public lane.
	Name string `yaml:"name"`
	// Priority lanes are served first, in the order listed, until nobody
	// is waiting in them; the others then share what is left.
	Priority bool `yaml:"priority"`
	// Weight among the non-priority lanes with visitors waiting (0 to 1,
	// such as 0.7 and 0.3); 0 counts as 1, an equal share.
	Share float64 `yaml:"share"`
	// Secret that verifies signed invite codes (each usable once), at
	// least 32 bytes, from the environment (${WAITROOM_PRESALE_INVITE_SECRET});
	// waitroom invites mint makes codes with it. Changing it revokes every
	// code minted with the old one.
	InviteSecret string `yaml:"invite_secret"`
	// Secret that verifies account proofs (the origin's HMAC of event and
	// account id), at least 32 bytes, from the environment.
	AccountSecret string `yaml:"account_secret"`
	// File with one account id per line (blank lines and # comments
	// skipped): only listed accounts may join with an account proof.
	// Needs account_secret. Read at start-up.
	AllowlistFile string `yaml:"allowlist_file"`
}

// Page configures an event's waiting-room page.
type Page struct {
	// Logo shown on the page: an https:// URL or a path on this site.
	LogoURL string `yaml:"logo_url"`
	// Colours of the built-in page.
	Colors Colors `yaml:"colors"`
	// Language when the visitor chose none with the page's switcher and
	// the browser's Accept-Language names none the page has: one of its
	// languages (en, ar, de, es, fr, it, ja, ko, nl, pl, pt, sv, tr, zh: a
	// file each under static/lang).
	DefaultLanguage Language `yaml:"default_language"`
	// Text overrides: language, then text key, then text, such as
	// {en: {title: "Summer Tour presale"}, fr: {title: "Prévente"}}. Keys are
	// those of static/lang/en.json, plus the further plural forms a
	// language has (pl: ahead_few); each keeps the built-in text's
	// {placeholders}.
	Texts map[Language]map[string]string `yaml:"texts"`
	// Directory with a room.html that replaces the built-in page template
	// (read at start-up); empty uses the built-in page.
	TemplateDir string `yaml:"template_dir"`
}

// Colors are the page's CSS colours, each "#rgb" or "#rrggbb"; empty keeps
// the built-in colour.
type Colors struct {
	// Page background.
	Background string `yaml:"background"`
	// Body text.
	Text string `yaml:"text"`
	// Progress bar, links and buttons.
	Accent string `yaml:"accent"`
}

// Language is a language of the waiting-room page.
type Language string

// Some languages of the waiting-room page, by name for code and tests;
// Languages lists them all.
const (
	LangEnglish Language = "en"
	LangGerman  Language = "de"
	LangSpanish Language = "es"
)

// Languages lists the page's languages, in the order messages name them:
// static.Languages, one per text file under static/lang.
func Languages() []Language {
	tags := static.Languages()
	langs := make([]Language, len(tags))
	for i, t := range tags {
		langs[i] = Language(t)
	}
	return langs
}

// Defaults of events[] that are not the admission engine's own (those are
// admission.Default…: tranche, session_duration, no_show_grace,
// visitors_per_seat and the controller's).
const (
	DefaultMode            = ModeAlways
	DefaultLandingPath     = "/"
	DefaultPositionDisplay = PositionApproximate
	DefaultLanguage        = LangEnglish
)

// DefaultEvent is the value every element of events starts from before
// the file's keys are applied. Its durations and controller settings are
// the admission engine's defaults.
func DefaultEvent() Event {
	return Event{
		Mode:            DefaultMode,
		LandingPath:     DefaultLandingPath,
		Tranche:         Duration(admission.DefaultTranche),
		SessionDuration: Duration(admission.DefaultSessionDuration),
		NoShowGrace:     Duration(admission.DefaultNoShowGrace),
		CompleteGrace:   Duration(admission.DefaultCompleteGrace),
		PositionDisplay: DefaultPositionDisplay,
		Challenge:       defaultEventChallenge(),
		Identity:        DefaultIdentityMode,
		VisitorsPerSeat: admission.DefaultVisitorsPerSeat,
		Controller: Controller{
			Tick:            Duration(admission.DefaultTick),
			TargetP95:       Duration(admission.DefaultTargetP95),
			TargetErrorRate: admission.DefaultTargetErrorRate,
			InitialActive:   admission.DefaultInitialActive,
			MinActive:       admission.DefaultMinActive,
			Decrease:        admission.DefaultDecrease,
		},
		Lanes: []Lane{},
		Page: Page{
			DefaultLanguage: DefaultLanguage,
			Texts:           map[Language]map[string]string{},
		},
	}
}

// UnmarshalYAML decodes an event, starting from DefaultEvent.
func (e *Event) UnmarshalYAML(n *yaml.Node) error {
	*e = DefaultEvent()
	type plain Event
	return decodeMapping(n, "Event", (*plain)(e))
}
