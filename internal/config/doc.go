// Package config reads, checks and describes waitroom's configuration file.
//
// A configuration is one YAML document decoded into Config. Load and Parse
// expand ${NAME} and ${NAME:-default} references to environment variables
// inside scalar values (never in keys or comments, and never as YAML
// structure: a variable's value always stays one string), reject unknown
// keys with their line numbers, and apply the defaults of Default to every
// key the file leaves out. Validate then checks the result and reports
// every problem at once, each with its key path.
//
// Every field of Config carries a doc comment; the configuration reference
// in the README is generated from those comments and the values of
// Default (go run ./internal/tools/configdoc).
//
// It is not where settings are turned into running parts: building stores,
// listeners and loggers from a Config happens in cmd/waitroom and
// internal/cli. It does not watch files or reload.
package config
