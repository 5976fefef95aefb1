package plugins

import (
	"context"
	"log/slog"

	"go.yaml.in/yaml/v3"
)

// Configured is the Factory of a plugin whose section decodes strictly
// into a C, which Check validates and New builds from. Every built-in
// plugin is one.
type Configured[C, T any] struct {
	// Defaults returns the value a section is decoded over; nil starts
	// from the zero C.
	Defaults func() C
	// Check validates a decoded section, with errors as Factory.Validate
	// returns them; nil accepts any section that decodes.
	Check func(C) error
	// New builds an instance from a section Check accepted.
	New func(ctx context.Context, c C, env Env) (T, error)
}

func (f Configured[C, T]) decode(raw *yaml.Node) (C, error) {
	var c C
	if f.Defaults != nil {
		c = f.Defaults()
	}
	err := Decode(raw, &c)
	return c, err
}

// Validate implements Factory.
func (f Configured[C, T]) Validate(raw *yaml.Node) error {
	c, err := f.decode(raw)
	if err != nil || f.Check == nil {
		return err
	}
	return f.Check(c)
}

// Build implements Factory. The section is not checked again: Registry
// calls Validate first, and a check may be costly (reading lists).
func (f Configured[C, T]) Build(ctx context.Context, raw *yaml.Node, env Env) (T, error) {
	c, err := f.decode(raw)
	if err != nil {
		var zero T
		return zero, err
	}
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	return f.New(ctx, c, env)
}
