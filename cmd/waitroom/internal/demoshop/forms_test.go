package demoshop

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/inventory"
)

// planEvent is the Plan as the sidecar stores it.
func planEvent() *inventory.Event {
	return &inventory.Event{ID: testEvent, EventDef: Plan().Normalized()}
}

func TestParseVisitor(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   string
		ok     bool
	}{
		{"typical", []string{"v_3kq9x2"}, "v_3kq9x2", true},
		{"printable punctuation", []string{"a!~{}"}, "a!~{}", true},
		{"longest", []string{strings.Repeat("x", inventory.MaxUserLen)}, strings.Repeat("x", inventory.MaxUserLen), true},
		{"absent", nil, "", false},
		{"empty", []string{""}, "", false},
		{"two values", []string{"a", "b"}, "", false},
		{"too long", []string{strings.Repeat("x", inventory.MaxUserLen+1)}, "", false},
		{"space", []string{"a b"}, "", false},
		{"tab", []string{"a\tb"}, "", false},
		{"control", []string{"a\x00"}, "", false},
		{"non-ASCII", []string{"ålice"}, "", false},
		{"DEL", []string{"a\x7f"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseVisitor(tt.values)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("parseVisitor(%q) = %q, %v; want %q, %v", tt.values, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseHoldForm(t *testing.T) {
	ev := planEvent()
	key := newFormKey()
	form := func(kv ...string) url.Values {
		f := url.Values{"key": {key}}
		for i := 0; i+1 < len(kv); i += 2 {
			f.Add(kv[i], kv[i+1])
		}
		return f
	}
	tests := []struct {
		name    string
		form    url.Values
		want    holdForm // key is filled in
		problem string   // "" when it parses
	}{
		{"seats", form("mode", "seats", "seat", "lower-A-1", "seat", "lower-A-2"),
			holdForm{mode: modeSeats, seats: []string{"lower-A-1", "lower-A-2"}}, ""},
		{"best", form("mode", "best", "section", "upper", "quantity", "4"),
			holdForm{mode: modeBest, section: "upper", quantity: 4}, ""},
		{"ga", form("mode", "ga", "pool", "floor", "quantity", "100"),
			holdForm{mode: modeGA, pool: "floor", quantity: 100}, ""},
		{"no key", url.Values{"mode": {"ga"}, "pool": {"floor"}, "quantity": {"1"}}, holdForm{}, "expired"},
		{"bad key", url.Values{"key": {"short"}, "mode": {"ga"}, "pool": {"floor"}, "quantity": {"1"}}, holdForm{}, "expired"},
		{"two keys", url.Values{"key": {key, key}, "mode": {"ga"}, "pool": {"floor"}, "quantity": {"1"}}, holdForm{}, "expired"},
		{"no mode", form(), holdForm{}, "Choose seats on the map"},
		{"unknown mode", form("mode", "all"), holdForm{}, "Choose seats on the map"},
		{"two modes", form("mode", "ga", "mode", "best"), holdForm{}, "Choose seats on the map"},
		{"no seats", form("mode", "seats"), holdForm{}, "Tick at least one seat"},
		{"bad seat", form("mode", "seats", "seat", "lower-A-0"), holdForm{}, "not a seat of this venue"},
		{"seat twice", form("mode", "seats", "seat", "lower-A-1", "seat", "lower-A-1"), holdForm{}, "chosen twice"},
		{"too many seats", func() url.Values {
			f := form("mode", "seats")
			for n := 1; n <= inventory.MaxHoldQuantity+1; n++ {
				f.Add("seat", inventory.SeatID("upper", "K", n))
			}
			return f
		}(), holdForm{}, "more seats than anyone"},
		{"unknown section", form("mode", "best", "section", "vip", "quantity", "1"), holdForm{}, "Choose a section"},
		{"pool as section", form("mode", "best", "section", "floor", "quantity", "1"), holdForm{}, "Choose a section"},
		{"zero", form("mode", "best", "section", "lower", "quantity", "0"), holdForm{}, "how many seats"},
		{"leading zero", form("mode", "best", "section", "lower", "quantity", "01"), holdForm{}, "how many seats"},
		{"plus", form("mode", "best", "section", "lower", "quantity", "+1"), holdForm{}, "how many seats"},
		{"negative", form("mode", "ga", "pool", "floor", "quantity", "-1"), holdForm{}, "how many tickets"},
		{"too many", form("mode", "ga", "pool", "floor", "quantity", "101"), holdForm{}, "how many tickets"},
		{"not a number", form("mode", "ga", "pool", "floor", "quantity", "two"), holdForm{}, "how many tickets"},
		{"unknown pool", form("mode", "ga", "pool", "balcony", "quantity", "1"), holdForm{}, "standing area"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseHoldForm(tt.form, ev)
			if tt.problem != "" {
				fe, ok := errors.AsType[*formError](err)
				if !ok || !errors.Is(err, errInvalidForm) || !strings.Contains(fe.public, tt.problem) {
					t.Fatalf("parseHoldForm: %v, want a form error about %q", err, tt.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want.key = key
			if got.mode != tt.want.mode || !slices.Equal(got.seats, tt.want.seats) || got.section != tt.want.section ||
				got.pool != tt.want.pool || got.quantity != tt.want.quantity || got.key != tt.want.key {
				t.Fatalf("parseHoldForm = %+v, want %+v", got, tt.want)
			}
			req := got.request("alice", DefaultHoldTTL)
			if err := req.Validate(); err != nil {
				t.Fatalf("the request the form makes is invalid: %v", err)
			}
		})
	}
}

func TestHoldRequestKeys(t *testing.T) {
	k1, k2 := newFormKey(), newFormKey()
	a := holdForm{mode: modeBest, section: "lower", quantity: 2, key: k1}
	key := func(h holdForm, visitor string) string { return h.request(visitor, DefaultHoldTTL).IdempotencyKey }

	if first, again := key(a, "alice"), key(a, "alice"); first != again {
		t.Fatal("the same form makes different keys")
	}
	b := a
	b.quantity = 3
	c := a
	c.key = k2
	d := holdForm{mode: modeSeats, seats: []string{"lower-A-1"}, key: k1}
	keys := []string{key(a, "alice"), key(b, "alice"), key(c, "alice"), key(a, "bob"), key(d, "alice")}
	for i, k := range keys {
		if !inventory.ValidIdempotencyKey(k) {
			t.Fatalf("key %q is not a valid idempotency key", k)
		}
		for j := range i {
			if keys[j] == k {
				t.Fatalf("keys %d and %d are equal: %q", i, j, k)
			}
		}
	}
}

func TestFormKeys(t *testing.T) {
	k := newFormKey()
	if !validFormKey(k) || k == newFormKey() {
		t.Fatalf("newFormKey: %q", k)
	}
	for _, bad := range []string{"", k[:len(k)-1], k + "A", strings.Repeat("=", len(k)), k[:len(k)-1] + "/", k[:len(k)-1] + "+"} {
		if validFormKey(bad) {
			t.Errorf("validFormKey(%q) = true", bad)
		}
	}
}

func TestSidecarKeyIsUnambiguous(t *testing.T) {
	if sidecarKey("pay", "ab", "c") == sidecarKey("pay", "a", "bc") {
		t.Fatal("the parts of a key run together")
	}
	if sidecarKey("pay", "a") == sidecarKey("refund", "a") {
		t.Fatal("kinds share keys")
	}
	if k := sidecarKey("refund-order", strings.Repeat("x", 64)); len(k) > inventory.MaxKeyLen || !inventory.ValidIdempotencyKey(k) {
		t.Fatalf("key %q", k)
	}
}

func TestCSRFTokens(t *testing.T) {
	newShop := func(event, secret string) *Shop { return testShop(t, event, secret) }
	s := newShop("ev", "0123456789abcdef")
	tok := s.csrfToken("alice")
	tests := []struct {
		name    string
		shop    *Shop
		visitor string
		token   string
		ok      bool
	}{
		{"own token", s, "alice", tok, true},
		{"same secret after a restart", newShop("ev", "0123456789abcdef"), "alice", tok, true},
		{"another visitor", s, "bob", tok, false},
		{"another event", newShop("ev2", "0123456789abcdef"), "alice", tok, false},
		{"another secret", newShop("ev", "fedcba9876543210"), "alice", tok, false},
		{"truncated", s, "alice", tok[:len(tok)-1], false},
		{"empty", s, "alice", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.shop.validCSRF(tt.visitor, tt.token); got != tt.ok {
				t.Fatalf("validCSRF = %v, want %v", got, tt.ok)
			}
		})
	}
}

// FuzzParseVisitor: whatever the header holds, an accepted visitor is a
// valid hold user that survives a header round trip unchanged.
func FuzzParseVisitor(f *testing.F) {
	for _, s := range []string{"alice", "", " a", "a\x00", strings.Repeat("x", 129), "v_3kq9x2-AB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, ok := parseVisitor([]string{v})
		if !ok {
			return
		}
		if got != v || strings.TrimSpace(v) != v {
			t.Fatalf("parseVisitor(%q) = %q", v, got)
		}
		req := inventory.HoldRequest{User: got, GA: &inventory.GARequest{Pool: "floor", Quantity: 1}}
		if err := req.Validate(); err != nil {
			t.Fatalf("accepted visitor %q is not a valid user: %v", v, err)
		}
	})
}

// FuzzParseHoldForm: any posted body either is refused with a form error
// or makes a hold request the sidecar accepts as well-formed.
func FuzzParseHoldForm(f *testing.F) {
	key := newFormKey()
	for _, s := range []string{
		"key=" + key + "&mode=seats&seat=lower-A-1&seat=upper-K-24",
		"key=" + key + "&mode=best&section=lower&quantity=2",
		"key=" + key + "&mode=ga&pool=floor&quantity=6",
		"key=" + key + "&mode=seats&seat=lower-A-1&seat=lower-A-1",
		"key=" + key + "&mode=best&section=lower&quantity=1e3",
		"key=x&mode=ga",
		"mode=seats&seat=%00",
		"",
	} {
		f.Add(s)
	}
	ev := planEvent()
	f.Fuzz(func(t *testing.T, body string) {
		form, err := url.ParseQuery(body)
		if err != nil {
			return
		}
		h, err := parseHoldForm(form, ev)
		h.area() // must not panic on a half-parsed form
		if err != nil {
			if _, ok := errors.AsType[*formError](err); !ok {
				t.Fatalf("not a form error: %v", err)
			}
			return
		}
		req := h.request("visitor", DefaultHoldTTL)
		if err := req.Validate(); err != nil {
			t.Fatalf("form %q made an invalid request: %v", body, err)
		}
	})
}
