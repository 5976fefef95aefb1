// Package builtin is the one list of waitroom's built-in plugins: importing
// it (for its side effects) registers every one of them in the registries
// of package plugins. The waitroom binary imports it; a custom build that
// wants fewer plugins, or more, imports the plugin packages it wants
// instead.
//
// It is not where plugins are configured or built: that is package
// plugins' registries, driven by the config file.
package builtin
