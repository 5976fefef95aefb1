package challenge

import (
	"context"
	"math"
	"testing"
)

func TestClientSignal(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name   string
		report *ClientReport
		want   Finding
	}{
		{"no report", nil, Finding{}},
		{"empty report", &ClientReport{}, Finding{}},
		{"a browser", &ClientReport{Webdriver: &no, SolveMillis: 950, Hashes: 4_000_000}, Finding{}},
		{"webdriver", &ClientReport{Webdriver: &yes}, Finding{1, ReasonClientWebdriver}},
		{"automation", &ClientReport{Automation: []string{"cdc_adoQpoasnfa76pfcZLmcfl_Array"}}, Finding{1, ReasonClientAutomation}},
		{"one API missing", &ClientReport{Missing: []string{"Worker"}}, Finding{0.5, ReasonClientMissingAPIs}},
		{"two APIs missing", &ClientReport{Missing: []string{"Worker", "IntersectionObserver"}}, Finding{0.75, ReasonClientMissingAPIs}},
		{"repeats count once", &ClientReport{Missing: []string{"Worker", "Worker"}}, Finding{0.5, ReasonClientMissingAPIs}},
		{"unknown names are ignored", &ClientReport{Missing: []string{"WebGL", "plugins"}}, Finding{}},
		{"too fast", &ClientReport{SolveMillis: 2, Hashes: 4_000_000}, Finding{0.5, ReasonClientSolveTooFast}},
		{"fast but a browser's", &ClientReport{SolveMillis: 100, Hashes: 4_000_000}, Finding{}},
		{"hashes without time", &ClientReport{Hashes: 4_000_000_000}, Finding{}},
		{"everything", &ClientReport{Webdriver: &yes, Missing: []string{"fetch"}, SolveMillis: 1, Hashes: 1 << 40}, Finding{1, ReasonClientWebdriver}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ClientSignal{}.Check(context.Background(), &Request{Client: tt.report})
			if err != nil || math.Abs(got.Suspicion-tt.want.Suspicion) > 1e-9 || got.Reason != tt.want.Reason {
				t.Errorf("Check = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	// Missing APIs and a fast solve combine as independent evidence.
	got, _ := ClientSignal{}.Check(context.Background(), &Request{Client: &ClientReport{Missing: []string{"fetch"}, SolveMillis: 1, Hashes: 1 << 40}})
	if math.Abs(got.Suspicion-0.75) > 1e-9 {
		t.Errorf("missing API and too fast: %+v, want 0.75", got)
	}
}
