// Package cli is waitroom's command line: the table of subcommands
// (waitroom help lists it), their flags, and the helpers they share for
// loading the configuration and making the logger.
//
// Each subcommand lives in its own file and adds itself to the table with
// register in an init function; its run function gets the arguments after
// its name and the standard streams, and returns the exit code: 0 for
// success, 1 when the work failed, 2 when the command line was wrong.
// Main never calls os.Exit, so the whole command line runs in tests with
// buffers for streams.
//
// It is not where the parts of waitroom are built: a subcommand wires
// packages together from a config.Config, and the packages hold the
// logic. It does not parse configuration files itself (internal/config
// does).
package cli
