package redisstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission/redisstore"
	"github.com/waitroom/waitroom/internal/redisconn"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// BenchmarkJoinAcked measures what redis.min_replicas_acked costs a
// join: AppendMember one after another on a master with one replica
// (both with appendfsync always, as production runs them), with no WAIT
// and with WAIT 1, in one run. Quote the ratio of the p50s.
//
//	go test -run '^$' -bench JoinAcked -benchtime 3000x ./admission/redisstore
func BenchmarkJoinAcked(b *testing.B) {
	r := redistest.StartReplicated(b, 1, redistest.Options{AppendOnly: true})
	for _, acks := range []int{0, 1} {
		b.Run(map[int]string{0: "acks0", 1: "acks1"}[acks], func(b *testing.B) {
			conn := redisconn.New(redisconn.Settings{URL: r.Master.URL(), MinReplicasAcked: acks}, nil)
			defer conn.Close()
			c, err := conn.Client()
			if err != nil {
				b.Fatal(err)
			}
			s, err := redisstore.New(context.Background(), redisstore.Options{Client: c, MinReplicasAcked: acks})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			took := make([]int64, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if err := s.AppendMember(ctx, "bench", "main", 0, visitor(uint64(i))); err != nil {
					b.Fatal(err)
				}
				took = append(took, int64(time.Since(start)))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2])/1e3, "p50-µs")
		})
	}
}
