// Package captcha provides waitroom's CAPTCHA providers, Cloudflare
// Turnstile ("turnstile"), hCaptcha ("hcaptcha") and Google reCAPTCHA v2
// and v3 ("recaptcha"), as challenge.Provider plugins registered in
// plugins.Captcha.
//
// Each checks a widget's token with the provider's siteverify API and then
// checks what the provider says against the site's configuration: the
// hostname the token was minted on, the widget's action, the token's age
// and, for reCAPTCHA v3, the score. Tokens are single use twice over: the
// provider rejects a second verification, and when the process has a
// challenge.ReplayGuard, a token's SHA-256 is redeemed there before the
// provider is asked, so that replicas never send one token twice and a
// fail-open provider cannot be replayed during an outage. The three
// providers share one siteverify client; what differs between them
// (endpoint, widget script, token lifetime, error codes) is data.
//
// Provider.Widget also says what the page's Content-Security-Policy must
// allow for the widget: the sources each provider documents, moved to the
// configured script_url's origin when that is not the provider's own.
//
// It is not where waitroom decides when to ask for a CAPTCHA (that is the
// risk score in package challenge), and it does not render the widget: the
// waiting-room page does, from Provider.Widget.
package captcha
