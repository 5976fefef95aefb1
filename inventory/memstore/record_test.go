package memstore

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/waitroom/waitroom/inventory"
)

// TestRecordEncoding holds appendRecord to encoding/json, byte for byte,
// so that journals written either way read back the same.
func TestRecordEncoding(t *testing.T) {
	def := inventory.EventDef{Sections: []inventory.Section{{ID: "A", Rows: []inventory.Row{{ID: "1", Seats: 2}}}}}
	h := inventory.Hold{ID: "hld_1", Seats: []string{"A-1-1"}}
	recs := []record{
		{Op: opDefine, At: 1, Actor: "ops \"x\"", Def: &def},
		{Op: opHold, At: 1795313800507, Actor: "<checkout>", Hold: "hld_1", User: "fan é", Seats: []string{"A-1-1", "A-1-2"}, Qty: 2, Price: 300, Expires: 1795314280507, Key: "k&1", FP: "abc", Res: &idemResult{Hold: &h}},
		{Op: opHold, At: 5, Hold: "hld_2", User: "u", Pool: "floor", Qty: 3},
		{Op: opConfirm, At: 6, Hold: "hld_1", Order: "ord_1", User: "u", Seats: []string{"A-1-1"}, Qty: 1, PayRef: "pay\n1"},
		{Op: opCancel, At: 7, Order: "ord_1", Reason: "refund"},
		{Op: opIdem, At: 8, Key: "k", FP: "f", Res: &idemResult{Err: &idemError{Code: "seat_unavailable", Seats: []string{"A-1-1"}}}},
		{},
	}
	for _, r := range recs {
		want, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendRecord(nil, &r)
		if err != nil || string(got) != string(want) {
			t.Errorf("appendRecord:\n got %s\nwant %s (%v)", got, want, err)
		}
	}
}

// TestSnapshotEncoding holds the streamed snapshot to encoding/json, byte
// for byte, so readSnapshot reads back exactly what was captured.
func TestSnapshotEncoding(t *testing.T) {
	def := inventory.EventDef{Sections: []inventory.Section{{ID: "A", Rows: []inventory.Row{{ID: "1", Seats: 3}}}},
		GA: []inventory.Pool{{ID: "floor", Capacity: 5}}}
	seats := []string{"A-1-1", "A-1-2"}
	f := snapshotFile{Format: snapshotFormat, Event: "ev", Offset: 1234, Def: def,
		Rows: [][]string{{"hs."}}, Pools: [][2]int{{1, 2}},
		Holds: []*hold{
			{ID: "hld_1", User: "u \"1\" <é>", Seats: seats, Qty: 2, Price: 30, Created: 5, Expires: 9, Status: inventory.HoldConfirmed, Order: "ord_1"},
			{ID: "hld_2", User: "u2", Pool: "floor", Qty: 1, Created: 6, Expires: 7, Status: inventory.HoldExpired, Ended: 7},
		},
		Orders: []*order{
			{ID: "ord_1", Hold: "hld_1", User: "u1", Seats: seats, Qty: 2, Price: 30, PayRef: "p&1", Status: inventory.OrderCancelled, Confirmed: 8, Cancelled: 10},
			{ID: "ord_2", Hold: "hld_3", User: "u3", Pool: "floor", Qty: 2, Status: inventory.OrderConfirmed, Confirmed: 11},
		},
		Idem: []*idemRec{{Key: "k", FP: "f", At: 3, Res: &idemResult{Err: &idemError{Code: "sold_out"}}}},
	}
	want, err := json.Marshal(&f)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := f.encode(&got); err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Fatalf("snapshot:\n got %s\nwant %s", got.String(), want)
	}
	empty := snapshotFile{Format: snapshotFormat, Event: "e", Def: def}
	want, _ = json.Marshal(&empty)
	got.Reset()
	empty.encode(&got)
	if got.String() != string(want) {
		t.Fatalf("empty snapshot:\n got %s\nwant %s", got.String(), want)
	}
}
