// Package registry is the table of names behind every extension point of
// waitroom: the plugins' registries (CAPTCHA providers, signals, scorers,
// sinks) and the store backends of admission, inventory and the challenge
// replay guard. An extension registers a factory under a name once, from
// an init function; the wiring looks the name from the configuration up.
//
// It also holds the two error types factories return, so that the wiring
// can put the configuration key in front: FieldError for a problem that
// validation finds, SettingError for a setting that fails at start-up.
//
// It is not where extensions are chosen or configured: that is the
// binary's wiring (cmd/waitroom/internal/...).
package registry
