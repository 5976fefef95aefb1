package app

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/waitroom/waitroom/internal/fsutil"
	"github.com/waitroom/waitroom/internal/registry"
)

// StartError is a start-up failure that one configuration setting
// explains: the setting's key, its value, and why it cannot be used. Its
// text is one line: "serve.listen 127.0.0.1:8080: address already in use".
// It is plain data, safe to share between goroutines.
type StartError struct {
	// Key is the configuration key (serve.listen, admission.data_dir) or
	// the command-line flag (--listen) whose value failed.
	Key string
	// Value is the value that failed, when showing it reveals no secret
	// (an address, a file name); empty otherwise.
	Value string
	// Err is the cause.
	Err error
	// Hint, when set, says what to do; it follows the cause in brackets.
	Hint string
}

// Error returns "key value: cause" on one line.
func (e *StartError) Error() string {
	s := e.Key
	if e.Value != "" {
		s += " " + e.Value
	}
	s += ": " + Cause(e.Err)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap returns the cause, for errors.Is.
func (e *StartError) Unwrap() error { return e.Err }

// startErr returns a *StartError, or nil when err is nil.
func startErr(key, value string, err error) error {
	if err == nil {
		return nil
	}
	return &StartError{Key: key, Value: value, Err: err}
}

// Cause says in a few words why err happened, without the operation and
// addresses its wrappers repeat ("listen tcp 127.0.0.1:8080: bind:
// address already in use" becomes "address already in use"), on one line.
func Cause(err error) string {
	switch {
	case err == nil:
		return "no error"
	case errors.Is(err, fsutil.ErrLocked):
		return "in use by another process (another waitroom holds its LOCK file)"
	case errors.Is(err, syscall.EADDRINUSE):
		return "address already in use"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return "address not available on this machine"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ENOTDIR):
		return "not a directory (a part of the path is a file)"
	case errors.Is(err, syscall.EISDIR):
		return "is a directory"
	case errors.Is(err, syscall.EROFS):
		return "read-only file system"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	}
	var se *StartError
	if errors.As(err, &se) {
		return OneLine(se)
	}
	// The innermost error of a chain says what happened; the wrappers
	// say where, which the key and value already do.
	for {
		u := errors.Unwrap(err)
		if u == nil {
			break
		}
		err = u
	}
	return OneLine(err)
}

// OneLine returns err's text on one line: the parts errors.Join puts on
// separate lines are separated by "; ".
func OneLine(err error) string {
	var parts []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, "; ")
}

// noBackend is the start-up error for a store name under which no
// backend is registered (check-config refuses it first; a caller of the
// wiring may not have asked).
func noBackend(key, name string, known []string) error {
	return startErr(key, name, fmt.Errorf("no such store backend (known: %s)", strings.Join(known, ", ")))
}

// settingErr returns err as a *StartError when it is a
// *registry.SettingError, a backend's failure that one setting of the
// section at key explains; err unchanged otherwise.
func settingErr(key string, err error) error {
	var se *registry.SettingError
	if errors.As(err, &se) {
		return &StartError{Key: key + "." + se.Key, Value: se.Value, Err: se.Err}
	}
	return err
}
