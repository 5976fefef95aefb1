package challenge

// WidgetScript is how the page script drives a CAPTCHA widget through its
// provider's JavaScript API: data a provider fills in, so that the page
// knows no provider by name. Every provider here follows the explicit
// rendering convention Turnstile, hCaptcha and reCAPTCHA share: the script
// at Widget.ScriptURL defines a global object with render(element,
// {sitekey, callback, action}) returning a widget id, reset(id) for
// another token, and, for invisible score widgets, execute(sitekey,
// {action}) returning a promise of the token. The token goes into the
// join request's captcha field. A WidgetScript is plain data, safe to
// share.
type WidgetScript struct {
	// API is the name of the global (window) object the provider's
	// script defines: "turnstile", "hcaptcha", "grecaptcha".
	API string
	// WaitReady: the script loads the widget code after itself, so the
	// page calls API.ready(fn) before it renders (reCAPTCHA). Turnstile's
	// ready() throws for a script the page inserts asynchronously, so it
	// must stay false there.
	WaitReady bool
	// Execute: the widget shows nothing and scores the visit for
	// Widget.Action; the page calls API.execute(site key, {action}) for
	// a token instead of rendering a widget (reCAPTCHA v3).
	Execute bool
}

// ScriptedProvider is a Provider that says how the page drives its
// widget. A Provider that is not one is driven as WidgetScriptOf says.
type ScriptedProvider interface {
	Provider
	// WidgetScript describes the widget's JavaScript API.
	WidgetScript() WidgetScript
}

// WidgetScriptOf returns p's WidgetScript: p's own description when it
// is a ScriptedProvider, else a widget rendered through the global named
// like its kind (window[Widget().Kind].render).
func WidgetScriptOf(p Provider) WidgetScript {
	if s, ok := p.(ScriptedProvider); ok {
		return s.WidgetScript()
	}
	return WidgetScript{API: p.Widget().Kind}
}
