// Package config reads, checks and describes waitroom's configuration file.
//
// A configuration is one YAML document decoded into Config: the sidecar
// (inventory), the proxy (serve, admin, admission, origins, routes,
// events) and log. Load and Parse expand ${NAME} and ${NAME:-default}
// references to environment variables inside scalar values (never in keys
// or comments, and never as YAML structure: a variable's value always
// stays one string), reject unknown keys with their line numbers, and
// apply the defaults of Default to every key the file leaves out; a list
// element (an origin, an event, a verification key) starts from
// DefaultOrigin, DefaultEvent or DefaultVerifyKey.
//
// Validate then checks the result for the roles the file configures
// (Config.Roles: the proxy, the sidecar or both) and reports every problem
// at once, each with its key path; ValidateFor checks for the roles a
// command runs. Validation is pure: it reads no file and changes nothing.
// Event times may be relative to the process start ("now+30s", see
// Instant); they are resolved, and their order checked, at start-up.
//
// Check (what waitroom check-config and serve -c use) does both and goes
// on past problems as far as it can: unset variables, unknown keys,
// values of the wrong type and validation problems come together in line
// order, each with its key path and a suggested fix ("did you mean
// listen?", "export NAME=..."), leaving out the problems that only follow
// from another one.
//
// Quickstart renders the configuration of waitroom serve --origin and
// waitroom init (one origin, threshold-mode waiting room on some path
// prefixes) as commented YAML that goes through Parse like any file.
//
// At start-up, after validation, Key.Load, Keys.Keyring, Lane.Load,
// LoadAllowlist, Event.Schedule and Event.AdmissionConfig read the files
// the configuration names (secrets, PEM keys, allowlists) and build the
// admission engine's values; ParseNetworks reads trusted proxies and
// bypass networks.
//
// Every field of Config carries a doc comment; the configuration reference
// in docs/configuration.md is generated from those comments and the values of
// Default (go run ./cmd/waitroom/internal/tools/configdoc).
//
// It is not where settings are turned into running parts: building stores,
// listeners, the proxy and loggers from a Config happens in cmd/waitroom,
// internal/app and internal/cli. It does not watch files or reload.
package config
