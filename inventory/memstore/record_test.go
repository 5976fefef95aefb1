package memstore

import (
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
