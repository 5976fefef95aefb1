package memstore_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/memstore"
)

// BenchmarkHoldRelease measures one durable hold and its release (two
// journal records, each acknowledged after its group commit) from
// parallel clients on distinct seats: the journal's write path.
func BenchmarkHoldRelease(b *testing.B) {
	ctx := context.Background()
	s, err := memstore.Open(memstore.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const rows, perRow = 100, 100
	def := inventory.EventDef{Sections: []inventory.Section{{ID: "A"}}}
	for r := range rows {
		def.Sections[0].Rows = append(def.Sections[0].Rows, inventory.Row{ID: strconv.Itoa(r), Seats: perRow})
	}
	if _, err := s.PutEvent(ctx, "ev", def, ""); err != nil {
		b.Fatal(err)
	}
	var next atomic.Uint64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := next.Add(1) % (rows * perRow)
			seat := "A-" + strconv.Itoa(int(n/perRow)) + "-" + strconv.Itoa(int(n%perRow)+1)
			h, err := s.Hold(ctx, "ev", inventory.HoldRequest{User: "u" + strconv.Itoa(int(n)), Seats: []string{seat}})
			if err != nil {
				continue // another client still holds this seat
			}
			if _, err := s.Release(ctx, "ev", h.ID, inventory.ReleaseRequest{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAvailability measures a read, which waits for nothing when
// every change is durable.
func BenchmarkAvailability(b *testing.B) {
	ctx := context.Background()
	s, err := memstore.Open(memstore.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	def := inventory.EventDef{Sections: []inventory.Section{{ID: "A", Rows: []inventory.Row{{ID: "1", Seats: 100}}}}}
	if _, err := s.PutEvent(ctx, "ev", def, ""); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Availability(ctx, "ev"); err != nil {
			b.Fatal(err)
		}
	}
}
