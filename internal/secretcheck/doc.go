// Package secretcheck says whether a secret is fit to key an HMAC or to
// stand as a bearer token: long enough and not obviously guessable. It is
// what waitroom check-config and waitroom serve apply to every secret
// the configuration takes, and what the plugins apply to theirs.
//
// It is a cheap screen for mistakes (a placeholder left in, a password
// typed by hand, the same letter 32 times), not an entropy estimator: a
// secret that passes may still be weak, one made by `waitroom keygen
// -secret` or `openssl rand -hex 32` always passes.
package secretcheck
