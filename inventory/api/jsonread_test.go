package api

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/waitroom/waitroom/inventory"
)

// stdHold is holdBody as encoding/json reads it.
type stdHold struct {
	User       string                 `json:"user"`
	Seats      []string               `json:"seats"`
	Best       *inventory.BestRequest `json:"best"`
	GA         *inventory.GARequest   `json:"ga"`
	TTLSeconds *int64                 `json:"ttl_seconds"`
	TTLMillis  *int64                 `json:"ttl_ms"`
}

var readerSeeds = []string{
	`{"user":"u1","seats":["A-1-1","A-1-2"]}`,
	`{"user":"u1","best":{"section":"A","quantity":2},"ttl_seconds":60}`,
	`{"user":"u\u00e9\ud83c\udfab","ga":{"pool":"floor","quantity":2},"ttl_ms":1500}`,
	`{"user":"a\"b\\c\/d\n","seats":[]}`,
	`{"user":null,"best":null}`,
	`{"user":"u1","user":"u2"}`,
	`{"User":"u1"}`,
	`{"user":"\ud800"}`,
	`{"user":"u1"} x`,
	`{"best":{"quantity":1.5}}`,
	`{"best":{"quantity":01}}`,
	`[1]`,
	` {"seats":[["x"]]}`,
	`{"sections":[{"id":"A","tier":"gold","price_cents":15000,"rows":[{"id":"1","seats":20}]}],"ga":[{"id":"floor","capacity":5000,"price_cents":9000}],"limits":{"per_user":4},"hold_ttl_seconds":480}`,
}

// FuzzJSONReader holds the strict reader to encoding/json: whatever it
// accepts, encoding/json reads to the same values; whatever encoding/json
// finds malformed, it rejects.
func FuzzJSONReader(f *testing.F) {
	for _, s := range readerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var ours holdBody
		err := decodeHold(body, &ours)
		var std stdHold
		stdErr := json.Unmarshal(body, &std)
		if err == nil {
			if stdErr != nil {
				t.Fatalf("accepted %q, which encoding/json rejects: %v", body, stdErr)
			}
			if !reflect.DeepEqual(stdHold(ours), std) && !(ours.Seats != nil && len(ours.Seats) == 0 && std.Seats != nil) {
				t.Fatalf("%q: read %+v, encoding/json %+v", body, ours, std)
			}
		}
		if !json.Valid(body) && err == nil {
			t.Fatalf("accepted malformed JSON %q", body)
		}

		var def eventBody
		err = decodeEvent(body, &def)
		var stdDef inventory.EventDef
		if stdErr := json.Unmarshal(body, &stdDef); err == nil && stdErr != nil {
			t.Fatalf("accepted event %q, which encoding/json rejects: %v", body, stdErr)
		} else if err == nil && !reflect.DeepEqual(norm(def), norm(stdDef)) {
			t.Fatalf("%q: read %+v, encoding/json %+v", body, def, stdDef)
		}
	})
}

// norm makes empty and nil slices compare equal.
func norm(d inventory.EventDef) inventory.EventDef {
	if len(d.Sections) == 0 {
		d.Sections = nil
	}
	if len(d.GA) == 0 {
		d.GA = nil
	}
	for i := range d.Sections {
		if len(d.Sections[i].Rows) == 0 {
			d.Sections[i].Rows = nil
		}
	}
	return d
}

func TestJSONReaderRejects(t *testing.T) {
	for _, body := range []string{
		`{"user":"u1","user":"u2"}`, `{"User":"u1"}`, `{"us\u0065r":"u1"}`, `{"user":"\ud800"}`,
		`{"user":"u1"} x`, `{"best":{"quantity":1.5}}`, `{"best":{"quantity":1e2}}`, `{"best":{"quantity":01}}`,
		`[1]`, ``, `{`, `{"user":"u1",}`, `{"user":"a` + "\x01" + `"}`, "{\"user\":\"\xff\"}",
		`{"seats":[["x"]]}`, `{"ttl_ms":99999999999999999999}`,
	} {
		var b holdBody
		if err := decodeHold([]byte(body), &b); err == nil {
			t.Errorf("accepted %q", body)
		}
	}
}

func BenchmarkDecodeHold(b *testing.B) {
	body := []byte(`{"user":"fan-1234","seats":["S-12-345"]}`)
	b.ReportAllocs()
	for b.Loop() {
		var h holdBody
		if err := decodeHold(body, &h); err != nil {
			b.Fatal(err)
		}
	}
}
