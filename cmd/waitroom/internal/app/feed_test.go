package app

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/memstore"
	"github.com/waitroom/waitroom/plugins"
)

// feedRig is an audit feed over a real embedded inventory store whose
// clock the test moves.
type feedRig struct {
	t     *testing.T
	store *memstore.Store
	clock *fakeclock.Clock
	lead  atomic.Bool
	feed  *auditFeed

	mu  sync.Mutex
	got []plugins.Event
}

const feedEvent = "show"

func newFeedRig(t *testing.T, capacity int) *feedRig {
	r := &feedRig{t: t, clock: fakeclock.New(time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC))}
	s, err := memstore.Open(memstore.Options{Dir: t.TempDir(), Clock: r.clock.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r.store = s
	if _, err := s.PutEvent(context.Background(), feedEvent, inventory.EventDef{
		GA: []inventory.Pool{{ID: "floor", Capacity: capacity}}}, "test"); err != nil {
		t.Fatal(err)
	}
	return r
}

// start builds the feed: what happened before now is history.
func (r *feedRig) start() {
	r.feed = newAuditFeed(r.store, map[string][]string{feedEvent: {"room"}},
		func(string) bool { return r.lead.Load() },
		func(e plugins.Event) { r.mu.Lock(); r.got = append(r.got, e); r.mu.Unlock() },
		r.clock.Now(), time.Second, 6*time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// poll runs one refresh at the rig's time and returns what it published.
func (r *feedRig) poll() []plugins.Event {
	r.mu.Lock()
	r.got = nil
	r.mu.Unlock()
	r.feed.poll(context.Background(), r.feed.streams[0], r.clock.Now())
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got
}

// sell holds n places for user and confirms them.
func (r *feedRig) sell(user string, n int) (inventory.Hold, inventory.Order) {
	r.t.Helper()
	ctx := context.Background()
	h, err := r.store.Hold(ctx, feedEvent, inventory.HoldRequest{User: user,
		GA: &inventory.GARequest{Pool: "floor", Quantity: n}})
	if err != nil {
		r.t.Fatal(err)
	}
	o, err := r.store.Confirm(ctx, feedEvent, h.ID, inventory.ConfirmRequest{PaymentRef: "pay-" + user})
	if err != nil {
		r.t.Fatal(err)
	}
	return h, o
}

func kinds(es []plugins.Event) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Kind)
	}
	return out
}

func TestFeedPublishesHoldsSalesAndTheSellOut(t *testing.T) {
	r := newFeedRig(t, 4)
	r.lead.Store(true)
	r.sell("before-start", 1) // history: not news
	r.clock.Add(time.Second)
	r.start()
	r.clock.Add(time.Second)
	h, o := r.sell("ann", 2)

	got := r.poll()
	if want := []string{"hold", "sold"}; !slices.Equal(kinds(got), want) {
		t.Fatalf("first read published %v, want %v (history skipped)", kinds(got), want)
	}
	hold, sold := got[0], got[1]
	if hold.Event != feedEvent || hold.Data["hold_id"] != h.ID || hold.Data["user"] != "ann" ||
		hold.Data["pool"] != "floor" || hold.Data["quantity"] != 2 || hold.Data["audit_id"] == "" {
		t.Errorf("hold event = %+v", hold)
	}
	if sold.Data["order_id"] != o.ID || sold.Data["hold_id"] != h.ID || sold.Data["audit_id"] == hold.Data["audit_id"] {
		t.Errorf("sold event = %+v", sold)
	}
	if !sold.At.Equal(r.clock.Now()) {
		t.Errorf("sold at %v, want the sidecar's time %v", sold.At, r.clock.Now())
	}
	if got := r.poll(); len(got) != 0 {
		t.Fatalf("a read with nothing new published %v", kinds(got))
	}

	r.sell("bob", 1) // the last place
	if got := kinds(r.poll()); !slices.Equal(got, []string{"hold", "sold", "sold_out"}) {
		t.Fatalf("the last sale published %v", got)
	}
	if got := kinds(r.poll()); len(got) != 0 {
		t.Fatalf("sold out again: %v", got)
	}

	// A cancellation frees a place; selling it again sells out again.
	if _, err := r.store.Cancel(context.Background(), feedEvent, o.ID, inventory.CancelRequest{Reason: "refund"}); err != nil {
		t.Fatal(err)
	}
	if got := kinds(r.poll()); len(got) != 0 {
		t.Fatalf("a cancellation published %v", got)
	}
	r.sell("cat", 2)
	if got := kinds(r.poll()); !slices.Equal(got, []string{"hold", "sold", "sold_out"}) {
		t.Fatalf("selling out again published %v", got)
	}
}

func TestFeedFollowerPublishesOnlyAfterTakingOver(t *testing.T) {
	r := newFeedRig(t, 10)
	r.start()
	r.sell("old", 1)
	r.poll() // read as a follower
	r.clock.Add(10 * time.Second)
	r.sell("ann", 1)
	if got := r.poll(); len(got) != 0 {
		t.Fatalf("a follower published %v", kinds(got))
	}
	r.clock.Add(2 * time.Second)

	// Taking over sends again what was read within the handover window
	// (ann's, read 2 s ago), not what is older (old's, 12 s ago), and
	// then what is new.
	r.lead.Store(true)
	r.sell("bob", 1)
	got := r.poll()
	var users []string
	for _, e := range got {
		users = append(users, e.Kind+":"+e.Data["user"].(string))
	}
	if want := []string{"hold:ann", "sold:ann", "hold:bob", "sold:bob"}; !slices.Equal(users, want) {
		t.Fatalf("the new leader published %v, want %v", users, want)
	}
	if got := r.poll(); len(got) != 0 {
		t.Fatalf("published twice: %v", kinds(got))
	}
}

func TestFeedSellOutBeforeStartIsNotNews(t *testing.T) {
	r := newFeedRig(t, 2)
	r.lead.Store(true)
	r.sell("ann", 2)
	r.clock.Add(time.Minute)
	r.start()
	if got := r.poll(); len(got) != 0 {
		t.Fatalf("a sell-out before the start published %v", kinds(got))
	}
}

func TestFeedReadsABacklogInPages(t *testing.T) {
	r := newFeedRig(t, 2*inventory.MaxAuditPage)
	r.lead.Store(true)
	r.start()
	ctx := context.Background()
	n := inventory.MaxAuditPage + 10
	for i := range n {
		if _, err := r.store.Hold(ctx, feedEvent, inventory.HoldRequest{User: "u" + string(rune('a'+i%26)),
			GA: &inventory.GARequest{Pool: "floor", Quantity: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.poll(); len(got) != n {
		t.Fatalf("published %d events for %d holds", len(got), n)
	}
}
