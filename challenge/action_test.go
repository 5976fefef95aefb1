package challenge

import (
	"errors"
	"strings"
	"testing"
)

func TestBandsAction(t *testing.T) {
	def := DefaultBands()
	tests := []struct {
		name  string
		bands Bands
		score int
		want  Action
	}{
		{"zero", def, 0, ActionLightPoW},
		{"below heavy", def, 29, ActionLightPoW},
		{"at heavy", def, 30, ActionHeavyPoW},
		{"below captcha", def, 59, ActionHeavyPoW},
		{"at captcha", def, 60, ActionCaptcha},
		{"at shadow", def, 80, ActionShadow},
		{"below block", def, 94, ActionShadow},
		{"at block", def, 95, ActionBlock},
		{"max", def, 100, ActionBlock},
		{"captcha off falls to heavy", Bands{HeavyPoW: 30, Shadow: 80, Block: 95}, 70, ActionHeavyPoW},
		{"block off stays shadow", Bands{HeavyPoW: 30, Captcha: 60, Shadow: 80}, 100, ActionShadow},
		{"above 100 is off", Bands{HeavyPoW: 30, Captcha: 60, Shadow: 80, Block: 101}, 100, ActionShadow},
		{"all off", Bands{}, 100, ActionLightPoW},
		{"threshold 1 catches any score", Bands{HeavyPoW: 1}, 1, ActionHeavyPoW},
		{"threshold 1 not score 0", Bands{HeavyPoW: 1}, 0, ActionLightPoW},
		{"threshold 100", Bands{Block: 100}, 100, ActionBlock},
		{"negative is off", Bands{HeavyPoW: -5}, 0, ActionLightPoW},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.bands.Action(tt.score); got != tt.want {
				t.Errorf("%+v.Action(%d) = %s, want %s", tt.bands, tt.score, got, tt.want)
			}
		})
	}
}

func TestBandsValidate(t *testing.T) {
	tests := []struct {
		name  string
		bands Bands
		want  []string // substrings, one per expected problem
	}{
		{"defaults", DefaultBands(), nil},
		{"all off", Bands{}, nil},
		{"gaps", Bands{HeavyPoW: 10, Block: 90}, nil},
		{"above 100 is off", Bands{HeavyPoW: 50, Captcha: 200, Shadow: 60}, nil},
		{"equal", Bands{HeavyPoW: 50, Captcha: 50}, []string{"captcha (50) must be above heavy_pow (50)"}},
		{"descending", Bands{HeavyPoW: 90, Captcha: 60, Shadow: 80, Block: 70},
			[]string{"captcha (60) must be above heavy_pow (90)", "shadow (80) must be above heavy_pow (90)", "block (70) must be above heavy_pow (90)"}},
		{"over an off band", Bands{HeavyPoW: 50, Shadow: 40}, []string{"shadow (40) must be above heavy_pow (50)"}},
		{"negative", Bands{HeavyPoW: -1, Block: -2}, []string{"heavy_pow is -1", "block is -2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.bands.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidBands) {
				t.Fatalf("Validate() = %v, want ErrInvalidBands", err)
			}
			msg := err.Error()
			if got := strings.Count(msg, "\n") + 1; got != len(tt.want) {
				t.Errorf("got %d problems, want %d: %s", got, len(tt.want), msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if !strings.HasPrefix(msg, "challenge: ") {
				t.Errorf("error %q lacks the package prefix", msg)
			}
		})
	}
}

func TestPolicyDecide(t *testing.T) {
	for _, score := range []int{0, 30, 60, 80, 95, 100} {
		want := DefaultBands().Action(score)
		on := Policy{Bands: DefaultBands()}.Decide(score)
		if on != (Decision{Would: want, Apply: want}) {
			t.Errorf("on: Decide(%d) = %+v, want both %s", score, on, want)
		}
		dry := Policy{Bands: DefaultBands(), DryRun: true}.Decide(score)
		if dry != (Decision{Would: want, Apply: ActionLightPoW}) {
			t.Errorf("dry run: Decide(%d) = %+v, want would %s, apply light_pow", score, dry, want)
		}
	}
}

func TestActionValid(t *testing.T) {
	for _, a := range []Action{ActionLightPoW, ActionHeavyPoW, ActionCaptcha, ActionShadow, ActionBlock} {
		if !a.Valid() {
			t.Errorf("%s.Valid() = false", a)
		}
	}
	for _, a := range []Action{"", "allow", "Block"} {
		if a.Valid() {
			t.Errorf("%q.Valid() = true", a)
		}
	}
}
