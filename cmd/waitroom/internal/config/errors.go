package config

import (
	"errors"
	"fmt"
	"strconv"
)

// Error is one problem with a configuration: where it is and what is
// wrong. Parse, Load and Validate return every problem they find as
// *Error values joined with errors.Join; Problems takes them apart. An
// Error is plain data, safe to share between goroutines.
type Error struct {
	// File is the configuration file's name; empty when unknown.
	File string
	// Line is the 1-based line in the file; 0 when unknown (Validate
	// works on the decoded Config and knows key paths only).
	Line int
	// Path is the key path, such as "inventory.redis.url" or
	// "inventory.redis.cluster[1]"; empty when the problem is the whole
	// file.
	Path string
	// Msg says what is wrong and, where it helps, what to do.
	Msg string
}

// Error returns "file:line: path: msg", leaving out the parts that are
// unknown.
func (e *Error) Error() string {
	var b []byte
	if e.File != "" {
		b = append(b, e.File...)
		if e.Line > 0 {
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(e.Line), 10)
		}
		b = append(b, ": "...)
	} else if e.Line > 0 {
		b = append(b, "line "...)
		b = strconv.AppendInt(b, int64(e.Line), 10)
		b = append(b, ": "...)
	}
	if e.Path != "" {
		b = append(b, e.Path...)
		b = append(b, ": "...)
	}
	b = append(b, e.Msg...)
	return string(b)
}

// Problems returns the problems inside err, a result of Parse, Load or
// Validate: the *Error values it joins (with errors.Join, at any depth),
// in order. Any other error, such as a file that cannot be read, comes
// back as one *Error whose Msg is its whole text.
func Problems(err error) []*Error {
	if err == nil {
		return nil
	}
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		switch x := err.(type) {
		case *Error:
			out = append(out, x)
		case interface{ Unwrap() []error }:
			for _, err := range x.Unwrap() {
				walk(err)
			}
		default:
			out = append(out, &Error{Msg: err.Error()})
		}
	}
	walk(err)
	return out
}

// InFile returns err with File set to file on every problem that has no
// file yet. It copies: the problems inside err are not changed.
func InFile(file string, err error) error {
	if err == nil {
		return nil
	}
	ps := Problems(err)
	errs := make([]error, len(ps))
	for i, p := range ps {
		c := *p
		if c.File == "" {
			c.File = file
		}
		errs[i] = &c
	}
	return errors.Join(errs...)
}

func errorf(line int, path, format string, args ...any) *Error {
	return &Error{Line: line, Path: path, Msg: fmt.Sprintf(format, args...)}
}
