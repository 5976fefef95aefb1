package static

import "testing"

func BenchmarkRoom(b *testing.B) {
	p := mustNew(b, summer(), PageConfig{Event: "fest"})
	al := []byte("de-DE,de;q=0.9,en-US;q=0.8,en;q=0.7")
	b.ReportAllocs()
	for b.Loop() {
		if p.Room("summer", al) == nil {
			b.Fatal("no page")
		}
	}
}

func BenchmarkRoomNoAcceptLanguage(b *testing.B) {
	p := mustNew(b, summer())
	b.ReportAllocs()
	for b.Loop() {
		p.Room("summer", nil)
	}
}

func BenchmarkNegotiate(b *testing.B) {
	al := []byte("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5")
	sup := []string{"en", "de", "es"}
	b.ReportAllocs()
	for b.Loop() {
		Negotiate(al, sup, "en")
	}
}

func BenchmarkAsset(b *testing.B) {
	p := mustNew(b, summer())
	name := []byte(p.AssetNames()[0])
	b.ReportAllocs()
	for b.Loop() {
		p.Asset(name)
	}
}

func BenchmarkNew(b *testing.B) {
	cfgs := []PageConfig{summer(), {Event: "fest", Name: "Fest", DefaultLanguage: "de"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(cfgs); err != nil {
			b.Fatal(err)
		}
	}
}
