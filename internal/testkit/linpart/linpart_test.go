package linpart

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

func TestBy(t *testing.T) {
	h := []porcupine.Operation{{Input: 2, ClientId: 0}, {Input: 1, ClientId: 1}, {Input: 2, ClientId: 2}}
	got := By(func(in any) int { return in.(int) })(h)
	if len(got) != 2 || len(got[0]) != 2 || got[0][0].ClientId != 0 || got[0][1].ClientId != 2 ||
		len(got[1]) != 1 || got[1][0].ClientId != 1 {
		t.Fatalf("By = %+v", got)
	}
}
