// Command waitroom is the one waitroom binary. Its subcommands and their
// flags are listed by "waitroom help" and live in internal/cli; this
// package only turns SIGINT and SIGTERM into a cancelled context and the
// result into the exit code.
package main
