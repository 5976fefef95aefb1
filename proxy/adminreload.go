package proxy

import (
	"context"
	"log/slog"
	"net/http"
)

// reloadHandler is POST /admin/v1/reload: the reload's report (200), the
// problems that refused the file (422, the running configuration stays),
// or 409 when there is no file to read again.
func reloadHandler(reload func(context.Context) (any, []string, error), log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		report, problems, err := reload(r.Context())
		switch {
		case err != nil:
			log.Warn("admin: reload not possible", "err", err)
			adminError(w, http.StatusConflict, "not_reloadable",
				"this waitroom was not started from a configuration file, so there is nothing to reload")
		case problems != nil:
			adminJSON(w, http.StatusUnprocessableEntity, struct {
				Error    string   `json:"error"`
				Message  string   `json:"message"`
				Problems []string `json:"problems"`
			}{"config_refused", "the configuration file has problems; nothing was changed and the running configuration stays", problems})
		default:
			adminJSON(w, http.StatusOK, report)
		}
	})
}
