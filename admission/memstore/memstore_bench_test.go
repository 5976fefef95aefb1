package memstore_test

import (
	"context"
	"testing"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/memstore"
)

// BenchmarkAppendMember measures a durable join from parallel clients:
// each append is acknowledged after the group commit that wrote it.
func BenchmarkAppendMember(b *testing.B) {
	ctx := context.Background()
	s, err := memstore.Open(memstore.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.AppendMember(ctx, "ev", "public", 0, admission.NewVisitorID()); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
