package admission_test

import (
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/memstore"
	"github.com/waitroom/waitroom/admission/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// benchJoin measures Engine.Join (a new visitor, appended durably to the
// store) from many goroutines, as a proxy's concurrent requests do.
func benchJoin(b *testing.B, s admission.Store) {
	clk := fakeclock.New(t0.Add(time.Second))
	e, err := admission.New(admission.Options{Store: s, Clock: clk.Now, Meter: &meter{}, Replica: "bench"}, event("show"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetParallelism(32) // joins wait for a durable write: many in flight share it
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, err := e.Join(ctx, "show", admission.JoinRequest{Binding: "b"}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkJoinMemstore(b *testing.B) {
	s, err := memstore.Open(memstore.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	benchJoin(b, s)
}

func BenchmarkJoinRedis(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{AppendOnly: true})
	s, err := redisstore.New(ctx, redisstore.Options{Client: srv.Client()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	benchJoin(b, s)
}
