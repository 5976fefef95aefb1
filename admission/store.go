package admission

import (
	"context"
	"time"
)

// Draw records the draw of one lane's tranche: its members, ordered by
// HMAC-SHA256(Seed, visitor id), got the numbers First..First+Count-1.
// The order itself is not stored: anyone with the members and the seed
// recomputes it (see Order).
type Draw struct {
	Tranche int       `json:"tranche"`
	Seed    []byte    `json:"seed"`
	First   uint64    `json:"first"`
	Count   uint64    `json:"count"`
	At      time.Time `json:"at"`
}

// VisitorBar keeps a visitor from being admitted again: once a replica
// knows the bar, no status poll mints the visitor a pass, and the passes
// they hold stop working at From. An operator's revocation takes effect
// at once (From is when it was made); a visitor whose origin answered
// X-Waitroom-Complete keeps their pass for a short grace (From is the
// completion plus the grace), so the purchase's last pages still load.
type VisitorBar struct {
	Visitor VisitorID `json:"visitor"`
	// From is when the visitor's passes stop working.
	From time.Time `json:"from"`
	// Until is when the bar may be forgotten: after every pass and every
	// turn the visitor could still have is over.
	Until time.Time `json:"until"`
	// Reason is why the visitor is barred.
	Reason BarReason `json:"reason"`
}

// BarReason is why a visitor is barred; it is what their status says
// (StatusClosed with this reason).
type BarReason string

// Bar reasons.
const (
	BarRevoked   BarReason = "revoked"   // an operator revoked the visitor
	BarCompleted BarReason = "completed" // the origin said the visitor is done
)

// Merge combines two bars of one visitor: the earlier From, the later
// Until, and BarRevoked over BarCompleted.
func (b VisitorBar) Merge(o VisitorBar) VisitorBar {
	if o.From.Before(b.From) {
		b.From = o.From
	}
	if o.Until.After(b.Until) {
		b.Until = o.Until
	}
	if o.Reason == BarRevoked {
		b.Reason = BarRevoked
	}
	return b
}

// AccountPlace is the place an account was given in an event: what its
// first ticket says, less the device binding and the number (which the
// draw gives), so that the account's next join, on any device and any
// replica, gets that place back.
type AccountPlace struct {
	Visitor VisitorID `json:"visitor"`
	Lane    string    `json:"lane"`
	Tranche int       `json:"tranche"`
	// IssuedAt and ExpiresAt are the first ticket's (whole seconds).
	IssuedAt  time.Time `json:"issued_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Next is the first number after the draw.
func (d Draw) Next() uint64 { return d.First + d.Count }

// Store is the durable state of the queues of every event. The engine
// keeps the hot state (serving counters, drawn orders, liveness) in memory
// and uses the store for what must survive a restart or be shared by
// replicas. Implementations are safe for concurrent use; with redisstore,
// by several processes.
//
// Durability: AppendMember, Seed, RecordDraw, Advance, Revoke,
// BarVisitors, UseInvite, PlaceAccount, SetControl and RecordMinute are durable when they return. Claim, MarkUsed and
// SaveController may be batched (flushed at least once a second and on Close): losing the
// last second of them after a crash only blurs a measurement. An
// operation whose context ends may still take effect.
//
// Values returned (members, seeds, draws, controller state) belong to the
// caller, who may change them (the engine sorts members in place).
//
// Members shows only appends that are durable, so a draw never numbers a
// visitor a crash could take back. redisstore meets this except in one
// window Redis 7.0 leaves open: a read in the same event-loop iteration
// as an APPEND sees it before the AOF is fsynced; if Redis then crashed at
// that instant, the draw's Count would exceed the members left. Draws run
// a second after their tranche closes, when appends to it are rare; Redis
// 7.2's WAITAOF would close the window.
type Store interface {
	// AppendMember records v in a lane's tranche. Appending the same
	// visitor twice may keep both; the draw drops duplicates.
	AppendMember(ctx context.Context, event, lane string, tranche int, v VisitorID) error
	// Members returns a tranche's members in the order they were appended.
	Members(ctx context.Context, event, lane string, tranche int) ([]VisitorID, error)
	// MemberCount returns how many members a tranche has (duplicates included).
	MemberCount(ctx context.Context, event, lane string, tranche int) (int, error)

	// Seed stores proposal as the tranche's seed unless one is stored
	// already, and returns the stored one: the first writer wins, so
	// replicas agree on one seed per tranche.
	Seed(ctx context.Context, event, lane string, tranche int, proposal []byte) ([]byte, error)

	// RecordDraw appends a lane's draw record. d.Tranche must follow the
	// last recorded draw of the lane (any tranche after it: empty
	// tranches are skipped) and d.First must equal the last draw's Next()
	// (1 for the first); a record identical to one already stored
	// succeeds; anything else is ErrDrawConflict.
	RecordDraw(ctx context.Context, event, lane string, d Draw) error
	// Draws returns a lane's draw records with Tranche > after, in order.
	Draws(ctx context.Context, event, lane string, after int) ([]Draw, error)

	// Advance raises a lane's serving counter to at least to and returns
	// its value (it never goes down).
	Advance(ctx context.Context, event, lane string, to uint64) (uint64, error)
	// Serving returns every lane's serving counter (absent lanes: 0).
	Serving(ctx context.Context, event string) (map[string]uint64, error)

	// Claim notes that the visitor with number n came for their turn
	// (their pass was minted). Claimed reports, for numbers from..to
	// inclusive, which were claimed (index i is number from+i).
	Claim(ctx context.Context, event, lane string, n uint64) error
	Claimed(ctx context.Context, event, lane string, from, to uint64) ([]bool, error)

	// MarkUsed notes that the passes of numbers were used: a request
	// carrying one was let through the gate, on any replica (see
	// Engine.NoteUse). Marking a number again is harmless. At most
	// MaxUseBatch numbers, each from 1 to the store's largest number;
	// otherwise ErrBadNumbers, and nothing is marked. The slice is not
	// kept. Used reports, for numbers from..to inclusive, which were
	// marked (index i is number from+i); 1 ≤ from ≤ to and at most
	// MaxUsedSpan numbers, otherwise ErrBadNumbers.
	MarkUsed(ctx context.Context, event, lane string, numbers []uint64) error
	Used(ctx context.Context, event, lane string, from, to uint64) ([]bool, error)

	// Revoke bars a pass (by its id) until its expiry (revoking it again
	// keeps the later time); Revocations lists the bars still in force.
	Revoke(ctx context.Context, event, passID string, until time.Time) error
	Revocations(ctx context.Context, event string) (map[string]time.Time, error)

	// BarVisitors records bars on visitors (see VisitorBar). A visitor
	// barred again keeps one bar: the earlier From, the later Until, and
	// BarRevoked over BarCompleted. A bar whose Until is over is not
	// recorded. VisitorBars lists the bars still in force (Until after
	// now), one per visitor.
	BarVisitors(ctx context.Context, event string, bars []VisitorBar) error
	VisitorBars(ctx context.Context, event string) ([]VisitorBar, error)

	// UseInvite marks an invite code used, reporting whether this was its
	// first use. Uses are remembered at least until forget (zero: for
	// ever; a time already past: not at all).
	UseInvite(ctx context.Context, event, code string, forget time.Time) (first bool, err error)

	// PlaceAccount records p as an account's place in an event unless
	// the account has one already, and returns the place recorded and
	// whether it is p: concurrent calls for one account, on any replica,
	// all return the one place the first of them recorded. account is
	// the engine's key for the account (AccountKey), never empty. The
	// place is remembered until forget (a time already past: not at all,
	// and p is returned as first). AccountPlace reads an account's place
	// (ok false when it has none in force). Durable when it returns.
	PlaceAccount(ctx context.Context, event, account string, p AccountPlace, forget time.Time) (AccountPlace, bool, error)
	AccountPlace(ctx context.Context, event, account string) (p AccountPlace, ok bool, err error)

	// SetControl and Control store and read an operator's overrides.
	SetControl(ctx context.Context, event string, c Control) error
	Control(ctx context.Context, event string) (Control, error)

	// SaveController and LoadController keep the controller's state, so a
	// new leader carries on where the old one stopped (nil: none saved).
	SaveController(ctx context.Context, event string, state []byte) error
	LoadController(ctx context.Context, event string) ([]byte, error)

	// GrantSlots replaces what is left of the event's pass-through slots
	// (threshold mode) with n, valid for ttl, and returns how many slots
	// were taken since the previous grant. TakeSlot takes one slot,
	// reporting whether one was left: each slot goes to exactly one
	// caller, on whichever replica. A grant whose ttl is over has none
	// left. Neither is durable: after a crash the leader grants afresh.
	GrantSlots(ctx context.Context, event string, n int, ttl time.Duration) (taken int, err error)
	TakeSlot(ctx context.Context, event string) (bool, error)

	// PublishSample replaces replica's measurement record of the event
	// (an encoded Sample, opaque to the store) with sample, which is
	// forgotten ttl after it was published unless published again: the
	// figures of a replica that died vanish within ttl. Samples returns
	// the records in force, by replica. Neither is durable: they are
	// the last tick's figures, published again at the next.
	PublishSample(ctx context.Context, event, replica string, sample []byte, ttl time.Duration) error
	Samples(ctx context.Context, event string) (map[string][]byte, error)

	// RecordMinute stores record (an encoded Minute, opaque to the
	// store) as the event's record of the minute starting at minute (a
	// whole minute), replacing one stored for that minute; it is
	// forgotten keep after it was written (keep ≥ 1ms). Minutes returns
	// the records in force of minutes from ≤ m < to, in minute order.
	// RecordMinute is durable when it returns.
	RecordMinute(ctx context.Context, event string, minute time.Time, record []byte, keep time.Duration) error
	Minutes(ctx context.Context, event string, from, to time.Time) ([]MinuteRecord, error)

	// Lease makes holder the event's leader for ttl, or renews its lease,
	// and reports whether holder is the leader now. The leader runs draws
	// and the controller; the others follow. An embedded store has one
	// process, which always leads.
	Lease(ctx context.Context, event, holder string, ttl time.Duration) (bool, error)

	// PutEventRecord stores body as the record of event id when the
	// stored record's revision is ifRevision (0: there is none), and
	// returns the new revision, ifRevision+1; otherwise it returns
	// ErrRecordConflict and changes nothing. DeleteEventRecord removes
	// the record on the same condition. EventRecords returns every
	// record, sorted by id. Records are few and small (MaxEventRecord
	// bytes at most, else ErrRecordTooLarge); all three are durable.
	PutEventRecord(ctx context.Context, id string, body []byte, ifRevision uint64) (uint64, error)
	DeleteEventRecord(ctx context.Context, id string, ifRevision uint64) error
	EventRecords(ctx context.Context) ([]EventRecord, error)

	// Close flushes what is batched and releases resources.
	Close() error
}

// OnceStore is a Store that spends one-time values itself (see
// JoinRequest.Once): a new place and the value it spends go in as one
// atomic, durable write, one round trip where a separate replay guard
// would take two. A value is spent for every event at once, and under
// the replay guard's own key where the guard shares the store's backend,
// so that spending through either spends it for both. Spending is atomic
// across every replica sharing the store: of any number of concurrent
// calls spending one value, one reports true.
type OnceStore interface {
	// SpendsOnce reports whether the store spends values itself; when
	// it does not, the other methods may fail. A sharded store declines:
	// an event's shard bounds the event's joins, and a separate replay
	// guard spreads the values over every shard.
	SpendsOnce() bool
	// AppendMemberOnce is AppendMember that first spends once, kept
	// spent until until: when once was spent before it appends nothing
	// and reports false. A call repeated after a lost reply (the same
	// visitor) reports true again.
	AppendMemberOnce(ctx context.Context, event, lane string, tranche int, v VisitorID, once []byte, until time.Time) (bool, error)
	// SpendOnce spends once alone (a join that places nobody new),
	// reporting false when it was spent before.
	SpendOnce(ctx context.Context, event string, once []byte, until time.Time) (bool, error)
}

// EventRecord is an event's configuration made or changed at run time
// (through the operator API), kept in the store so that every replica
// and a restart see it. The store does not read Body.
type EventRecord struct {
	ID string
	// Revision counts the record's versions, from 1.
	Revision uint64
	Body     []byte
}

// MaxEventRecord bounds an event record's body.
const MaxEventRecord = 256 << 10
