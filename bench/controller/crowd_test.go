package main

import "testing"

func TestRefreshTold(t *testing.T) {
	c := newCrowd(crowdConfig{})
	for _, s := range []float64{1, 0.5, 1.5, 2, 5, 30, 31} {
		c.noteRefresh(s)
	}
	if got, want := c.refreshTold(), "≤ 1s ×2, 1–2s ×2, 2–5s ×1, 5–30s ×1, > 30s ×1"; got != want {
		t.Errorf("refreshTold() = %q, want %q", got, want)
	}
}
