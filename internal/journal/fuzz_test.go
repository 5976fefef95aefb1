package journal

import (
	"bytes"
	"testing"
)

// FuzzScan feeds arbitrary files to the frame reader of both codecs: it
// never fails or panics, stops at a frame boundary, and what it keeps
// re-encodes to exactly the file's prefix.
func FuzzScan(f *testing.F) {
	f.Add(append(frame(3, []byte("one")), frame(0, nil)...))
	f.Add(append(frame(1, bytes.Repeat([]byte{1}, 16)), 0xff, 0, 0))
	f.Add([]byte{0, 0, 0})
	f.Add(frame(2, []byte("x")))
	f.Fuzz(func(t *testing.T, file []byte) {
		for _, format := range []Format{records, items, {ItemSize: 3, MaxCount: 5}} {
			var again []byte
			end, err := Scan(bytes.NewReader(file), 0, format, func(off, end int64, p []byte) error {
				if off != int64(len(again)) {
					t.Fatalf("frame at %d, want %d", off, len(again))
				}
				n := uint32(len(p))
				if format.ItemSize > 0 {
					n /= uint32(format.ItemSize)
				}
				again = append(again, frame(n, p)...)
				if end != int64(len(again)) {
					t.Fatalf("frame ends at %d, want %d", end, len(again))
				}
				return nil
			})
			if err != nil || end != int64(len(again)) || !bytes.Equal(again, file[:end]) {
				t.Fatalf("%+v: kept %d bytes (%v), re-encoded %x, file %x", format, end, err, again, file)
			}
		}
	})
}
