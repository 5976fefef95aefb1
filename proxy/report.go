package proxy

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/waitroom/waitroom/admission/report"
)

// reportPolicy lets the report page use its inline style and nothing
// else: it needs no script and fetches nothing.
const reportPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// report serves GET /admin/v1/events/{id}/report?format=csv|json|html:
// the event's record after the sale (admission/report), the same bytes
// as `waitroom report --event ID --format F`.
func (a *admin) report(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	cfg, err := a.p.engine.Config(id)
	if err != nil {
		adminError(w, http.StatusNotFound, "unknown_event", "there is no such event")
		return
	}
	f, err := report.ParseFormat(r.URL.Query().Get("format"))
	if err != nil {
		adminError(w, http.StatusBadRequest, "bad_format", "format must be csv, json or html")
		return
	}
	rep, err := report.Build(r.Context(), a.p.engine.Store(), report.Event{ID: id, Lanes: report.Lanes(cfg), Prefix: string(a.p.gen.Load().prefix)}, time.Time{}, time.Time{})
	if err != nil {
		a.p.log.Warn("proxy: building a report failed", "event", id, "err", err)
		adminError(w, http.StatusServiceUnavailable, "unavailable", "the admission store could not be read; retry")
		return
	}
	var b bytes.Buffer
	if err := rep.Write(&b, f); err != nil {
		a.p.log.Warn("proxy: writing a report failed", "event", id, "err", err)
		adminError(w, http.StatusInternalServerError, "internal", "the report could not be written")
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.ContentType())
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", ReferrerPolicy)
	if f == report.HTML {
		h.Set("Content-Security-Policy", reportPolicy)
	} else {
		h.Set("Content-Disposition", `attachment; filename="`+reportFile(id, f)+`"`)
	}
	_, _ = w.Write(b.Bytes())
}

// reportFile names a downloaded report: the event id's safe characters.
func reportFile(id string, f report.Format) string {
	b := []byte("report-")
	for i := 0; i < len(id) && i < 64; i++ {
		c := id[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' {
			b = append(b, c)
		} else {
			b = append(b, '_')
		}
	}
	return string(b) + "." + string(f)
}
