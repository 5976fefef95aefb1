// Package identity tells the proxy who is logged in at the origin, so
// that an event can give one place per account (admission.JoinRequest's
// Account). The origin says it in a cookie or a header of its own
// choosing, in one of two ways:
//
//   - a signed identity, account.expiry.mac, HMAC-SHA256 with a secret the
//     origin shares with waitroom (admission.MakeIdentity makes one,
//     admission.ParseIdentity checks it);
//   - a JWT the origin's identity provider signed (RS256, ES256 or EdDSA),
//     checked against the provider's JWKS, its issuer, audience and
//     expiry, the account taken from one of its claims ("sub" unless told
//     otherwise). The key set is fetched with a timeout, cached, and
//     fetched again when a token names a key it does not hold, at most
//     once per MinRefresh.
//
// A Verifier is safe for concurrent use. It decides nothing about what a
// missing or refused identity means for a join: that is the event's
// Mode, applied by the proxy.
//
// It is not a login: waitroom never sees a password and never sets the
// identity; the origin does.
package identity
