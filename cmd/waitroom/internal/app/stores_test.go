package app

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"testing"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/registry"
)

// A backend's setting error gets its section's key; a store name without
// a backend is a start-up error naming the known ones.
func TestStoreErrors(t *testing.T) {
	err := settingErr("admission", &registry.SettingError{Key: "data_dir", Value: "/var/lib/wr", Err: fs.ErrPermission})
	var se *StartError
	if !errors.As(err, &se) || se.Key != "admission.data_dir" || err.Error() != "admission.data_dir /var/lib/wr: permission denied" {
		t.Errorf("settingErr = %v", err)
	}
	plain := errors.New("redis: NOAUTH")
	if settingErr("admission", plain) != plain {
		t.Error("settingErr changed an error that names no setting")
	}
	cfg := config.Default().Inventory
	cfg.Store = "memory"
	_, _, err = OpenInventoryStore(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err == nil || err.Error() != "inventory.store memory: no such store backend (known: embedded, redis)" {
		t.Errorf("an unknown inventory store: %v", err)
	}
}
