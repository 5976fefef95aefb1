package static

import "testing"

// Serving a page is on the proxy's hot path: no allocation.
func TestServingAllocatesNothing(t *testing.T) {
	p := mustNew(t, summer(), PageConfig{Event: "fest", DefaultLanguage: "es"})
	al := []byte("de-CH,de;q=0.9,en;q=0.5")
	asset := []byte(p.AssetNames()[0])
	for _, c := range []struct {
		name string
		fn   func()
	}{
		{"Room", func() { p.Room("summer", al) }},
		{"RoomGzip", func() { p.RoomGzip("fest", al) }},
		{"Room unknown event", func() { p.Room("nope", al) }},
		{"Busy", func() { p.Busy(al) }},
		{"BusyGzip", func() { p.BusyGzip(nil) }},
		{"Blocked", func() { p.Blocked("summer", al) }},
		{"Maintenance", func() { p.Maintenance("summer", al) }},
		{"Asset", func() { p.Asset(asset) }},
		{"CSP", func() { _ = p.CSP() }},
		{"RoomCSP", func() { _ = p.RoomCSP("summer") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(200, c.fn); n != 0 {
				t.Errorf("%s allocates %.1f times per call", c.name, n)
			}
		})
	}
}
