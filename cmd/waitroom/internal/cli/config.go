package cli

import (
	"io"
	"log/slog"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

// loadConfig returns the configuration in the file at path, loaded and
// validated (config.Check: every problem at once, each naming the file). With path "" it returns
// config.Default() unvalidated, for a command that fills in settings from
// its flags and then calls config.Validate itself.
func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return config.Default(), nil
	}
	return config.Check(path, 0)
}

// newLogger returns a logger writing to w at the level and in the format
// cfg names. Values Validate rejects fall back to info and text.
func newLogger(cfg config.Log, w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	switch cfg.Level {
	case config.LevelDebug:
		level = slog.LevelDebug
	case config.LevelWarn:
		level = slog.LevelWarn
	case config.LevelError:
		level = slog.LevelError
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Format == config.FormatJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
