package cli

import (
	"context"
	"fmt"
)

func init() {
	register(command{
		name:    "help",
		summary: "list the commands, or show one command's flags (help COMMAND)",
		run:     runHelp,
	})
}

func runHelp(ctx context.Context, args []string, s stdio) int {
	fs := newFlags("help", `Usage: waitroom help [COMMAND]

Lists the commands, or shows how to use one of them.
`)
	if code, done := parseFlags(fs, args, s); done {
		return code
	}
	switch fs.NArg() {
	case 0:
		usage(s.stdout)
		return exitOK
	case 1:
		c, ok := commands[fs.Arg(0)]
		if !ok {
			fmt.Fprintf(s.stderr, "waitroom help: unknown command %q\n\n", fs.Arg(0))
			usage(s.stderr)
			return exitUsage
		}
		return c.run(ctx, []string{"-h"}, s)
	default:
		return badUsage(fs, s, "name one command, not %d", fs.NArg())
	}
}
