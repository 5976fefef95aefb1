// Package plugins is waitroom's extension registry: one Registry per
// extension point (CAPTCHA providers, risk signals including the external
// scorer, event sinks), mapping a plugin name to the Factory that
// validates its config section and builds instances. The built-in plugins
// live in subpackages and register themselves; plugins/builtin imports
// them all in one list, and the binary imports plugins/builtin.
//
// It is not where the bot defence decides anything: scoring, proof of
// work and the replay guard are package challenge. Plugins only supply
// instances of challenge's interfaces (and of Sink, defined here).
package plugins
