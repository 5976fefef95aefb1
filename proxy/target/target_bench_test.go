package target

import "testing"

// BenchmarkParse is the work every request does before routing: parse and
// normalise the target, then key its path for the route table.
func BenchmarkParse(b *testing.B) {
	for _, raw := range []string{"/gated/page", "/_wr/api/status?event=bench", "http://shop.example//static/../events/%7esummer/?x=1"} {
		b.Run(raw, func(b *testing.B) {
			var t Target
			key := make([]byte, 0, 128)
			in := []byte(raw)
			b.ReportAllocs()
			for b.Loop() {
				if t.Parse(in, Options{}) == nil {
					key = Key(key[:0], t.Path, true)
					_ = t.URI()
				}
			}
		})
	}
}
