package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	write := flag.String("w", "", "rewrite the config-reference block in `FILE` instead of printing")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./cmd/waitroom/internal/tools/configdoc [-w FILE]\n\nPrints the configuration reference generated from internal/config.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*write); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(file string) error {
	gen, err := Generate()
	if err != nil {
		return err
	}
	if file == "" {
		_, err := os.Stdout.WriteString(gen)
		return err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out, err := replaceBlock(string(data), gen)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if out == string(data) {
		return nil
	}
	info, err := os.Stat(file)
	if err != nil {
		return err
	}
	return os.WriteFile(file, []byte(out), info.Mode().Perm())
}
