package challenge

import (
	"context"
	"net/netip"
	"testing"
)

type plainProvider struct{}

func (plainProvider) Verify(context.Context, string, netip.Addr) error { return nil }
func (plainProvider) Widget() Widget                                   { return Widget{Kind: "acme"} }

type scriptedProvider struct{ plainProvider }

func (scriptedProvider) WidgetScript() WidgetScript {
	return WidgetScript{API: "acmeCaptcha", WaitReady: true}
}

func TestWidgetScriptOf(t *testing.T) {
	if got := WidgetScriptOf(plainProvider{}); got != (WidgetScript{API: "acme"}) {
		t.Errorf("a provider without a description: %+v, want its kind as the API", got)
	}
	if got := WidgetScriptOf(scriptedProvider{}); got != (WidgetScript{API: "acmeCaptcha", WaitReady: true}) {
		t.Errorf("a ScriptedProvider: %+v", got)
	}
}
