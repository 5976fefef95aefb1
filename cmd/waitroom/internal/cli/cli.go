package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Exit codes of every command.
const (
	exitOK    = 0 // done
	exitError = 1 // the command ran and failed
	exitUsage = 2 // the command line was wrong
)

// stdio is a command's standard streams.
type stdio struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// command is one subcommand: waitroom NAME [flags].
type command struct {
	// name is what the user types: "check-config".
	name string
	// summary is one line for the command list, lower case, no period.
	summary string
	// run does the work. args are the arguments after the name; run
	// returns the exit code. It stops early when ctx is cancelled
	// (SIGINT or SIGTERM).
	run func(ctx context.Context, args []string, s stdio) int
}

// commands is the table of subcommands, filled by register during
// package initialisation and only read after it.
var commands = map[string]command{}

// register adds c to the table. Call it from an init function in the
// command's own file. It panics on a duplicate or malformed entry.
func register(c command) {
	if c.name == "" || strings.HasPrefix(c.name, "-") || c.summary == "" || c.run == nil {
		panic(fmt.Sprintf("cli: malformed command %q", c.name))
	}
	if _, dup := commands[c.name]; dup {
		panic("cli: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// Main runs the command line args (without the program name) and returns
// the process's exit code. ctx is cancelled to ask a long-running command
// to stop. Main is safe for concurrent use.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	s := stdio{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		usage(s.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(s.stdout)
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(s.stderr, "waitroom: unknown command %q\n\n", args[0])
		usage(s.stderr)
		return exitUsage
	}
	return c.run(ctx, args[1:], s)
}

// usage writes the overview with the table of commands.
func usage(w io.Writer) {
	names := make([]string, 0, len(commands))
	width := 0
	for name := range commands {
		names = append(names, name)
		width = max(width, len(name))
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("waitroom is a self-hosted waiting-room reverse proxy for flash sales,\n")
	b.WriteString("with a seat-hold sidecar.\n\n")
	b.WriteString("Usage:\n  waitroom COMMAND [flags]\n\nCommands:\n")
	for _, name := range names {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, name, commands[name].summary)
	}
	b.WriteString("\nRun \"waitroom COMMAND -h\" for a command's flags.\n")
	io.WriteString(w, b.String())
}

// newFlags returns the flag set of the command name. help is shown by -h
// before the list of flags: a "Usage: waitroom NAME ..." line, a blank
// line and what the command does.
func newFlags(name, help string) *flag.FlagSet {
	fs := flag.NewFlagSet("waitroom "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parseFlags prints, to the right stream
	fs.Usage = func() {
		w := fs.Output()
		io.WriteString(w, help)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			io.WriteString(w, "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseFlags parses args into fs. When done is true the command returns
// code at once: -h printed the help to stdout (0), or the flags were wrong
// and the error and help went to stderr (2).
func parseFlags(fs *flag.FlagSet, args []string, s stdio) (code int, done bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return exitOK, false
	case errors.Is(err, flag.ErrHelp):
		printHelp(fs, s.stdout)
		return exitOK, true
	default:
		fmt.Fprintf(s.stderr, "%s: %v\n\n", fs.Name(), err)
		printHelp(fs, s.stderr)
		return exitUsage, true
	}
}

// badUsage reports a command line that parsed but makes no sense, such as
// a missing flag, and returns the exit code for it.
func badUsage(fs *flag.FlagSet, s stdio, format string, args ...any) int {
	fmt.Fprintf(s.stderr, "%s: %s\n\n", fs.Name(), fmt.Sprintf(format, args...))
	printHelp(fs, s.stderr)
	return exitUsage
}

// noArgs reports arguments left after the flags, which commands that take
// none must refuse rather than ignore.
func noArgs(fs *flag.FlagSet, s stdio) (code int, done bool) {
	if fs.NArg() == 0 {
		return exitOK, false
	}
	return badUsage(fs, s, "unexpected argument %q", fs.Arg(0)), true
}

func printHelp(fs *flag.FlagSet, w io.Writer) {
	fs.SetOutput(w)
	fs.Usage()
	fs.SetOutput(io.Discard)
}
