// Package app wires configuration to running parts: it builds stores,
// servers and background workers from a config.Config and runs them until
// their context ends. It is the one place where packages meet; the core
// packages (inventory, admission, ...) never import it.
//
// It is not a library for others: the CLI (internal/cli) calls it.
package app
