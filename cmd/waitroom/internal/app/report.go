package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/report"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/redisconn"
)

// OpenAdmissionStore builds the admission store cfg names, by the
// backend registered under admission.store, for a command that reads it
// (serve opens its own, sharing the connection with the replay guard).
// The returned close function releases it and its Redis client. The
// embedded store is locked by a running waitroom serve: read it through
// the admin API then, or after the server stops.
func OpenAdmissionStore(ctx context.Context, cfg config.Admission, log *slog.Logger) (admission.Store, func() error, error) {
	f, ok := admission.Stores.Lookup(string(cfg.Store))
	if !ok {
		return nil, nil, noBackend("admission.store", string(cfg.Store), admission.Stores.Names())
	}
	conn := redisconn.New(cfg.Redis.Settings(), log)
	s, err := f.Build(ctx, cfg.StoreConfig(conn, log))
	if err != nil {
		conn.Close()
		return nil, nil, settingErr("admission", err)
	}
	return s, func() error { return errors.Join(s.Close(), conn.Close()) }, nil
}

// EventReport builds the report of the configured event id from store,
// as GET /admin/v1/events/{id}/report does on a running server.
func EventReport(ctx context.Context, cfg *config.Config, store admission.Store, id string) (*report.Report, error) {
	for i := range cfg.Events {
		if cfg.Events[i].ID != id {
			continue
		}
		ec, err := cfg.Events[i].AdmissionConfig(time.Now())
		if err != nil {
			return nil, fmt.Errorf("events[%d] (%s): %w", i, id, err)
		}
		return report.Build(ctx, store, report.Event{ID: id, Lanes: report.Lanes(ec), Prefix: cfg.Serve.Prefix}, time.Time{}, time.Time{})
	}
	return nil, fmt.Errorf("the configuration has no event %q", id)
}
