package config

import (
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Duration
		text string // String of the result
		err  string
	}{
		{in: "1s", want: time.Second, text: "1s"},
		{in: "500ms", want: 500 * time.Millisecond, text: "500ms"},
		{in: "24h", want: 24 * time.Hour, text: "24h"},
		{in: "1h30m", want: 90 * time.Minute, text: "1h30m"},
		{in: "90s", want: 90 * time.Second, text: "1m30s"},
		{in: "2m", want: 2 * time.Minute, text: "2m"},
		{in: "10s", want: 10 * time.Second, text: "10s"},
		{in: "1h0m1s", want: time.Hour + time.Second, text: "1h0m1s"},
		{in: "0", want: 0, text: "0s"},
		{in: "-1s", want: -time.Second, text: "-1s"},
		{in: `"250ms"`, want: 250 * time.Millisecond, text: "250ms"},
		{in: "5", err: `line 1: invalid duration "5": want a number with a unit, such as 500ms, 1s or 24h`},
		{in: "1d", err: `line 1: invalid duration "1d": want a number with a unit, such as 500ms, 1s or 24h`},
		{in: "[1s]", err: "line 1: want a duration such as 500ms, 1s or 24h"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			var d Duration
			err := yaml.Unmarshal([]byte(tt.in), &d)
			if tt.err != "" {
				te, ok := err.(*yaml.TypeError)
				if !ok || len(te.Errors) != 1 || te.Errors[0] != tt.err {
					t.Fatalf("got error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			eq(t, d.Std(), tt.want)
			eq(t, d.String(), tt.text)
			out, err := yaml.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			var back Duration
			if err := yaml.Unmarshal(out, &back); err != nil || back != d {
				t.Errorf("round trip through %q: got %v, %v", out, back, err)
			}
		})
	}
}
