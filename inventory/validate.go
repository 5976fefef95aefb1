package inventory

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// problems collects validation failures with their field paths.
type problems []string

func (p *problems) add(path, format string, args ...any) {
	*p = append(*p, path+": "+fmt.Sprintf(format, args...))
}

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &Error{Kind: ErrInvalid, Message: strings.Join(p, "; ")}
}

// isIDChar reports whether c may appear in a section, row or pool id. The
// hyphen is excluded because it separates the parts of a seat id.
func isIDChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// validName checks an identifier: 1..max chars, the first alphanumeric, the
// rest from isIDChar (plus '-' when dash is true).
func validName(s string, max int, dash bool) bool {
	if len(s) == 0 || len(s) > max || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIDChar(s[i]) && !(dash && s[i] == '-') {
			return false
		}
	}
	return true
}

// ValidEventID reports whether id can name an event: 1-64 characters from
// [A-Za-z0-9_.-], starting with a letter or digit.
func ValidEventID(id string) bool { return validName(id, MaxEventIDLen, true) }

// ValidRecordID reports whether id has the shape of a hold or order id:
// 1-64 characters from [A-Za-z0-9_-].
func ValidRecordID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !isAlnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// validText checks free text that ends up in the audit stream: valid UTF-8,
// no control characters, at most max bytes.
func validText(s string, max int) bool {
	if len(s) > max || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// ValidIdempotencyKey reports whether k is 1-255 printable ASCII characters.
func ValidIdempotencyKey(k string) bool {
	if len(k) == 0 || len(k) > MaxKeyLen {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// ValidActor reports whether a is acceptable as an audit actor (may be empty).
func ValidActor(a string) bool { return validText(a, MaxActorLen) }

// SeatID builds the id of seat number (1-based) in a section's row.
func SeatID(section, row string, number int) string {
	return section + "-" + row + "-" + strconv.Itoa(number)
}

// ParseSeatID splits SECTION-ROW-NUMBER. It checks the shape only, not that
// the seat exists.
func ParseSeatID(id string) (section, row string, number int, ok bool) {
	i := strings.IndexByte(id, '-')
	if i < 0 {
		return "", "", 0, false
	}
	j := strings.IndexByte(id[i+1:], '-')
	if j < 0 {
		return "", "", 0, false
	}
	j += i + 1
	section, row, num := id[:i], id[i+1:j], id[j+1:]
	if !validName(section, MaxIDLen, false) || !validName(row, MaxIDLen, false) {
		return "", "", 0, false
	}
	if len(num) == 0 || len(num) > 4 || num[0] == '0' {
		return "", "", 0, false
	}
	for i := 0; i < len(num); i++ { // Atoi alone would take "+1"
		if num[i] < '0' || num[i] > '9' {
			return "", "", 0, false
		}
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || n > MaxSeatsPerRow {
		return "", "", 0, false
	}
	return section, row, n, true
}

// Validate checks a definition and returns every problem with its field
// path, joined into one ErrInvalid. It does not change d.
func (d *EventDef) Validate() error {
	var p problems
	if len(d.Sections) == 0 && len(d.GA) == 0 {
		p.add("sections", "an event needs at least one section or GA pool")
	}
	if len(d.Sections) > MaxSections {
		p.add("sections", "at most %d sections", MaxSections)
	}
	seen := map[string]bool{}
	total := 0
	for i, s := range d.Sections {
		path := fmt.Sprintf("sections[%d]", i)
		if !validName(s.ID, MaxIDLen, false) {
			p.add(path+".id", "must be 1-%d characters from [A-Za-z0-9_.], starting with a letter or digit", MaxIDLen)
		} else if seen[s.ID] {
			p.add(path+".id", "duplicate section %q", s.ID)
		}
		seen[s.ID] = true
		if s.Tier != "" && !validName(s.Tier, MaxIDLen, true) {
			p.add(path+".tier", "must be 1-%d characters from [A-Za-z0-9_.-]", MaxIDLen)
		}
		if s.PriceCents < 0 || s.PriceCents > MaxPriceCents {
			p.add(path+".price_cents", "must be between 0 and %d", int64(MaxPriceCents))
		}
		if len(s.Rows) == 0 {
			p.add(path+".rows", "a section needs at least one row")
		}
		if len(s.Rows) > MaxRowsPerSection {
			p.add(path+".rows", "at most %d rows", MaxRowsPerSection)
		}
		rows := map[string]bool{}
		for j, r := range s.Rows {
			rp := fmt.Sprintf("%s.rows[%d]", path, j)
			if !validName(r.ID, MaxIDLen, false) {
				p.add(rp+".id", "must be 1-%d characters from [A-Za-z0-9_.], starting with a letter or digit", MaxIDLen)
			} else if rows[r.ID] {
				p.add(rp+".id", "duplicate row %q", r.ID)
			}
			rows[r.ID] = true
			if r.Seats < 1 || r.Seats > MaxSeatsPerRow {
				p.add(rp+".seats", "must be between 1 and %d", MaxSeatsPerRow)
			} else {
				total += r.Seats
			}
		}
	}
	if total > MaxSeatsPerEvent {
		p.add("sections", "at most %d seats per event, got %d", MaxSeatsPerEvent, total)
	}
	if len(d.GA) > MaxPools {
		p.add("ga", "at most %d pools", MaxPools)
	}
	pools := map[string]bool{}
	for i, g := range d.GA {
		path := fmt.Sprintf("ga[%d]", i)
		if !validName(g.ID, MaxIDLen, false) {
			p.add(path+".id", "must be 1-%d characters from [A-Za-z0-9_.], starting with a letter or digit", MaxIDLen)
		} else if pools[g.ID] {
			p.add(path+".id", "duplicate pool %q", g.ID)
		}
		pools[g.ID] = true
		if g.Capacity < 1 || g.Capacity > MaxPoolCapacity {
			p.add(path+".capacity", "must be between 1 and %d", MaxPoolCapacity)
		}
		if g.PriceCents < 0 || g.PriceCents > MaxPriceCents {
			p.add(path+".price_cents", "must be between 0 and %d", int64(MaxPriceCents))
		}
	}
	if d.Limits.PerUser < 0 || d.Limits.PerUser > MaxPerUserLimit {
		p.add("limits.per_user", "must be between 0 (no limit) and %d", MaxPerUserLimit)
	}
	if d.HoldTTLSeconds < 0 || d.HoldTTLSeconds > int(MaxHoldTTL/time.Second) {
		p.add("hold_ttl_seconds", "must be between 0 (default %d) and %d", int(DefaultHoldTTL/time.Second), int(MaxHoldTTL/time.Second))
	} else if d.MaxHoldSeconds != 0 && (d.MaxHoldSeconds < int(d.HoldTTL()/time.Second) || d.MaxHoldSeconds > int(MaxHoldTTL/time.Second)) {
		p.add("max_hold_seconds", "must be 0 (%d × the hold TTL) or between the hold TTL (%d) and %d",
			DefaultMaxHoldFactor, int(d.HoldTTL()/time.Second), int(MaxHoldTTL/time.Second))
	}
	return p.err()
}

// PrepareEvent checks everything a store needs to define event id with
// def on behalf of actor, and returns the definition in the form stores
// keep (Normalized). Every store calls it first.
func PrepareEvent(id string, def EventDef, actor string) (EventDef, error) {
	if !ValidEventID(id) {
		return def, Errorf(ErrInvalid, "event: must be 1-%d characters from [A-Za-z0-9_.-], starting with a letter or digit", MaxEventIDLen)
	}
	if err := def.Validate(); err != nil {
		return def, err
	}
	if !ValidActor(actor) {
		return def, Errorf(ErrInvalid, "actor: must be at most %d characters without control characters", MaxActorLen)
	}
	return def.Normalized(), nil
}

// Normalized returns a copy of d with defaults filled in and nil slices
// made empty, the form stores keep.
func (d EventDef) Normalized() EventDef {
	if d.HoldTTLSeconds == 0 {
		d.HoldTTLSeconds = int(DefaultHoldTTL / time.Second)
	}
	if d.MaxHoldSeconds == 0 {
		d.MaxHoldSeconds = int(d.MaxHold() / time.Second)
	}
	if d.Sections == nil {
		d.Sections = []Section{}
	}
	if d.GA == nil {
		d.GA = []Pool{}
	}
	for i := range d.Sections {
		if d.Sections[i].Rows == nil {
			d.Sections[i].Rows = []Row{}
		}
	}
	return d
}

// Totals returns the number of numbered seats and the summed GA capacity.
func (d *EventDef) Totals() (seats, ga int) {
	for _, s := range d.Sections {
		for _, r := range s.Rows {
			seats += r.Seats
		}
	}
	for _, g := range d.GA {
		ga += g.Capacity
	}
	return seats, ga
}

// Validate checks the shape of a hold request (not whether its seats
// exist) and returns every problem.
func (r *HoldRequest) Validate() error {
	var p problems
	if r.User == "" || !validText(r.User, MaxUserLen) {
		p.add("user", "must be 1-%d characters of text without control characters", MaxUserLen)
	}
	kinds := 0
	if r.Seats != nil {
		kinds++
		if len(r.Seats) == 0 {
			p.add("seats", "must list at least one seat")
		}
		if len(r.Seats) > MaxHoldQuantity {
			p.add("seats", "at most %d seats per hold", MaxHoldQuantity)
		}
		seen := make(map[string]bool, len(r.Seats))
		for i, s := range r.Seats {
			if _, _, _, ok := ParseSeatID(s); !ok {
				p.add(fmt.Sprintf("seats[%d]", i), "%q is not a seat id (SECTION-ROW-NUMBER)", truncate(s, 80))
			} else if seen[s] {
				p.add(fmt.Sprintf("seats[%d]", i), "seat %q listed twice", s)
			}
			seen[s] = true
		}
	}
	if r.Best != nil {
		kinds++
		b := r.Best
		switch {
		case b.Section == "" && b.Tier == "":
			p.add("best", "needs a section or a tier")
		case b.Section != "" && b.Tier != "":
			p.add("best", "give a section or a tier, not both")
		case b.Section != "" && !validName(b.Section, MaxIDLen, false):
			p.add("best.section", "is not a section id")
		case b.Tier != "" && !validName(b.Tier, MaxIDLen, true):
			p.add("best.tier", "is not a tier name")
		}
		if b.Quantity < 1 || b.Quantity > MaxHoldQuantity {
			p.add("best.quantity", "must be between 1 and %d", MaxHoldQuantity)
		}
	}
	if r.GA != nil {
		kinds++
		if !validName(r.GA.Pool, MaxIDLen, false) {
			p.add("ga.pool", "is not a pool id")
		}
		if r.GA.Quantity < 1 || r.GA.Quantity > MaxHoldQuantity {
			p.add("ga.quantity", "must be between 1 and %d", MaxHoldQuantity)
		}
	}
	if kinds != 1 {
		p.add("request", "give exactly one of seats, best or ga")
	}
	// Compare in seconds: multiplying first could overflow into a negative TTL.
	if r.TTLSeconds < 0 || r.TTLSeconds > int(MaxHoldTTL/time.Second) {
		p.add("ttl_seconds", "must be between 0 (the event's TTL) and %d", int(MaxHoldTTL/time.Second))
	}
	if r.TTL < 0 || r.TTL > MaxHoldTTL || (r.TTL > 0 && r.TTL < time.Millisecond) {
		p.add("ttl", "must be between 1ms and %s", MaxHoldTTL)
	}
	if r.IdempotencyKey != "" && !ValidIdempotencyKey(r.IdempotencyKey) {
		p.add("Idempotency-Key", "must be 1-%d printable ASCII characters", MaxKeyLen)
	}
	if !ValidActor(r.Actor) {
		p.add("actor", "must be at most %d characters without control characters", MaxActorLen)
	}
	return p.err()
}

// TTLFor returns the lifetime a hold made by r gets in an event.
func (r *HoldRequest) TTLFor(d *EventDef) time.Duration {
	switch {
	case r.TTL > 0:
		return r.TTL
	case r.TTLSeconds > 0:
		return time.Duration(r.TTLSeconds) * time.Second
	}
	return d.HoldTTL()
}

// Fingerprint identifies what r asks for, so that a reused idempotency key
// with a different request is caught.
func (r *HoldRequest) Fingerprint() string {
	var b strings.Builder
	b.WriteString("hold\x00")
	b.WriteString(r.User)
	b.WriteByte(0)
	b.WriteString(strings.Join(r.Seats, ","))
	if r.Best != nil {
		fmt.Fprintf(&b, "\x00best\x00%s\x00%s\x00%d", r.Best.Section, r.Best.Tier, r.Best.Quantity)
	}
	if r.GA != nil {
		fmt.Fprintf(&b, "\x00ga\x00%s\x00%d", r.GA.Pool, r.GA.Quantity)
	}
	fmt.Fprintf(&b, "\x00%d\x00%d", r.TTLSeconds, r.TTL.Milliseconds())
	return fingerprint(b.String())
}

// Validate checks a confirm request.
func (r *ConfirmRequest) Validate() error {
	var p problems
	if !validText(r.PaymentRef, MaxPaymentRefLen) {
		p.add("payment_ref", "must be at most %d characters without control characters", MaxPaymentRefLen)
	}
	if r.IdempotencyKey != "" && !ValidIdempotencyKey(r.IdempotencyKey) {
		p.add("Idempotency-Key", "must be 1-%d printable ASCII characters", MaxKeyLen)
	}
	if !ValidActor(r.Actor) {
		p.add("actor", "must be at most %d characters without control characters", MaxActorLen)
	}
	return p.err()
}

// Fingerprint identifies a confirm of hold.
func (r *ConfirmRequest) Fingerprint(hold string) string {
	return fingerprint("confirm\x00" + hold + "\x00" + r.PaymentRef)
}

// Validate checks a release request.
func (r *ReleaseRequest) Validate() error {
	var p problems
	if r.IdempotencyKey != "" && !ValidIdempotencyKey(r.IdempotencyKey) {
		p.add("Idempotency-Key", "must be 1-%d printable ASCII characters", MaxKeyLen)
	}
	if !ValidActor(r.Actor) {
		p.add("actor", "must be at most %d characters without control characters", MaxActorLen)
	}
	return p.err()
}

// Fingerprint identifies a release of hold.
func (r *ReleaseRequest) Fingerprint(hold string) string {
	return fingerprint("release\x00" + hold)
}

// Validate checks an extend request.
func (r *ExtendRequest) Validate() error {
	var p problems
	if r.TTLSeconds < 0 || r.TTLSeconds > int(MaxHoldTTL/time.Second) {
		p.add("ttl_seconds", "must be between 0 (the event's TTL) and %d", int(MaxHoldTTL/time.Second))
	}
	if r.TTL < 0 || r.TTL > MaxHoldTTL || (r.TTL > 0 && r.TTL < time.Millisecond) {
		p.add("ttl", "must be between 1ms and %s", MaxHoldTTL)
	}
	if r.IdempotencyKey != "" && !ValidIdempotencyKey(r.IdempotencyKey) {
		p.add("Idempotency-Key", "must be 1-%d printable ASCII characters", MaxKeyLen)
	}
	if !ValidActor(r.Actor) {
		p.add("actor", "must be at most %d characters without control characters", MaxActorLen)
	}
	return p.err()
}

// TTLMillis is the requested lifetime from now in milliseconds; 0 means
// the event's hold TTL.
func (r *ExtendRequest) TTLMillis() int64 {
	switch {
	case r.TTL > 0:
		return r.TTL.Milliseconds()
	case r.TTLSeconds > 0:
		return int64(r.TTLSeconds) * 1000
	}
	return 0
}

// ExtendedExpiry is the expiry (Unix ms) an extend by r at now gives a
// live hold created at created and expiring at expires in an event: the
// requested lifetime from now, bounded by the event's MaxHold from
// creation, and never earlier than expires. The Redis script computes the
// same.
func (r *ExtendRequest) ExtendedExpiry(d *EventDef, created, expires, now int64) int64 {
	ttl := r.TTLMillis()
	if ttl == 0 {
		ttl = d.HoldTTL().Milliseconds()
	}
	return max(expires, min(now+ttl, created+d.MaxHold().Milliseconds()))
}

// Fingerprint identifies an extend of hold.
func (r *ExtendRequest) Fingerprint(hold string) string {
	return fingerprint("extend\x00" + hold + "\x00" + strconv.FormatInt(r.TTLMillis(), 10))
}

// Validate checks a cancel request.
func (r *CancelRequest) Validate() error {
	var p problems
	if !validText(r.Reason, MaxPaymentRefLen) {
		p.add("reason", "must be at most %d characters without control characters", MaxPaymentRefLen)
	}
	if !ValidActor(r.Actor) {
		p.add("actor", "must be at most %d characters without control characters", MaxActorLen)
	}
	return p.err()
}

func fingerprint(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:12])
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
