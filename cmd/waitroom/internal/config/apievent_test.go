package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseAPIEvent(t *testing.T) {
	a, err := ParseAPIEvent([]byte(`{"event":{"id":"summer","name":"Summer $50 sale ${HOME}","on_sale_at":"2030-06-01T10:00:00Z",
		"caps":{"max_active":300}},"routes":[{"prefix":"/summer/"},{"prefix":"/summer/checkout","event":"summer","action":"block"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Event.ID != "summer" || a.Event.Name != "Summer $50 sale ${HOME}" {
		t.Fatalf("event %q %q: values must be taken as written", a.Event.ID, a.Event.Name)
	}
	if a.Event.Caps.MaxActive != 300 {
		t.Fatalf("max_active %d", a.Event.Caps.MaxActive)
	}
	d := DefaultEvent()
	if a.Event.Tranche != d.Tranche || a.Event.SessionDuration != d.SessionDuration {
		t.Fatalf("defaults not filled: %+v", a.Event)
	}
	if !a.Event.OnSaleAt.abs.Equal(time.Date(2030, 6, 1, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("on_sale_at %+v", a.Event.OnSaleAt)
	}
	if len(a.Routes) != 2 || a.Routes[0].Event != "summer" || a.Routes[1].Action != "block" {
		t.Fatalf("routes %+v", a.Routes)
	}

	for _, c := range []struct{ body, want string }{
		{`{"event":{"id":"x","nmae":"typo"}}`, "nmae"},
		{`{"event":{"id":"x"},"extra":1}`, "extra"},
		{`{"event":{"id":"x","name":"a","name":"b"}}`, "name"},
		{`{"event":{"id":"x","caps":{"max_active":"many"}}}`, "max_active"},
		{`{"event":{"id":"x"},"routes":[{"prefix":"/a/","event":"other"}]}`, `routes[0].event: must be "x"`},
		{`[1]`, "mapping"},
		{`{"event":`, ""},
	} {
		if _, err := ParseAPIEvent([]byte(c.body)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a problem naming %q", c.body, err, c.want)
		}
	}
	// Every problem, not the first.
	_, err = ParseAPIEvent([]byte(`{"event":{"id":"x","nmae":"a","colour":"b"},"rutes":[]}`))
	for _, k := range []string{"nmae", "colour", "rutes"} {
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("problems %v lack %s", err, k)
		}
	}
}

func FuzzParseAPIEvent(f *testing.F) {
	for _, s := range []string{`{"event":{"id":"x"}}`, `{"event":{"id":"x"},"routes":[{"prefix":"/x/"}]}`,
		`{"event":{"id":"x","on_sale_at":"2030-01-01T00:00:00Z","page":{"name":"t"}}}`, "event: {id: x}", `&a [*a]`, `{"event":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseAPIEvent(data)
		if err != nil {
			return
		}
		for i, r := range a.Routes {
			if r.Event != a.Event.ID {
				t.Fatalf("route %d names %q, not the event %q", i, r.Event, a.Event.ID)
			}
		}
	})
}

// An event of the file, written as an API record, reads back the same.
func TestAPIEventJSONRoundTrip(t *testing.T) {
	cfg, err := Parse([]byte(`
origins: [{name: site, addresses: ["127.0.0.1:1"]}]
events:
  - id: summer
    name: Summer sale
    queue_opens_at: "2030-06-01T09:00:00Z"
    on_sale_at: "2030-06-01T10:00:00Z"
    caps: {max_active: 300, max_new_per_minute: 50}
    session_duration: 15m
routes: [{prefix: /summer/, event: summer}]
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	b, err := APIEventJSON(cfg.Events[0])
	if err != nil {
		t.Fatal(err)
	}
	a, err := ParseAPIEvent(b)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if !reflect.DeepEqual(a.Event, cfg.Events[0]) || len(a.Routes) != 0 {
		t.Fatalf("read back\n%+v\nwant\n%+v", a.Event, cfg.Events[0])
	}
}
