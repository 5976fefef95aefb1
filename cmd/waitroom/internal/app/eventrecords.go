// The event lifecycle through the operator API: events made, changed or
// removed at run time are records in the admission store (so every
// replica and a restart see them); the effective event set is the file's
// events overlaid with those records.

package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

// Where an event's configuration comes from, as GET /admin/v1/events
// reports it.
const (
	originFile = "file" // the configuration file
	originAPI  = "api"  // a record made through the operator API
)

// overlay returns the effective configuration: file with its events
// overlaid by the records (a record replaces the file's event of its id,
// or adds an event after the file's) and the records' routes after the
// file's routes, and each event's origin. It changes neither file nor
// the records. A record that does not parse is a problem naming it (the
// API stores only what it validated: another version of waitroom wrote
// it); every problem is listed. The result is not validated: see
// checkEffective.
func overlay(file *config.Config, recs []admission.EventRecord) (*config.Config, map[string]string, error) {
	eff := *file
	eff.Events = slices.Clone(file.Events)
	eff.Routes = slices.Clone(file.Routes)
	origin := make(map[string]string, len(eff.Events)+len(recs))
	at := make(map[string]int, len(eff.Events))
	for i, e := range eff.Events {
		origin[e.ID], at[e.ID] = originFile, i
	}
	var errs []error
	for _, r := range recs {
		a, err := config.ParseAPIEvent(r.Body)
		if err != nil {
			errs = append(errs, fmt.Errorf("app: the stored record of event %q does not parse: %s", r.ID, OneLine(err)))
			continue
		}
		if a.Event.ID != r.ID {
			errs = append(errs, fmt.Errorf("app: the stored record of event %q holds event %q", r.ID, a.Event.ID))
			continue
		}
		if i, ok := at[r.ID]; ok {
			eff.Events[i] = a.Event
		} else {
			at[r.ID] = len(eff.Events)
			eff.Events = append(eff.Events, a.Event)
		}
		origin[r.ID] = originAPI
		eff.Routes = append(eff.Routes, a.Routes...)
	}
	return &eff, origin, errors.Join(errs...)
}

// checkEffective validates the effective configuration as a file would
// be (config.ValidateFor with RoleProxy), and returns every problem. The
// problems of the event id and of the routes of its record, which the
// caller is making, are named as the request names them ("event.caps.
// max_active", "routes[0].prefix"), the others by their place in the
// effective configuration.
func checkEffective(eff *config.Config, id string, fileRoutes int) []string {
	err := config.ValidateFor(eff, config.RoleProxy)
	if err == nil {
		return nil
	}
	idx := slices.IndexFunc(eff.Events, func(e config.Event) bool { return e.ID == id })
	var out []string
	for _, p := range config.Problems(err) {
		q := *p
		q.Line, q.File = 0, ""
		q.Path = requestPath(q.Path, idx, fileRoutes, eff.Routes, id)
		out = append(out, q.Error())
	}
	if len(out) == 0 {
		out = []string{OneLine(err)}
	}
	return out
}

// requestPath renames a path of the effective configuration that falls
// in the event being made (events[idx]) or its routes (routes[k] from
// fileRoutes on that name id) as the request names it.
func requestPath(path string, idx, fileRoutes int, routes []config.Route, id string) string {
	if rest, ok := strings.CutPrefix(path, "events["+strconv.Itoa(idx)+"]"); ok && idx >= 0 {
		return "event" + rest
	}
	if rest, ok := strings.CutPrefix(path, "routes["); ok {
		n, tail, ok := strings.Cut(rest, "]")
		k, err := strconv.Atoi(n)
		if ok && err == nil && k >= fileRoutes && k < len(routes) && routes[k].Event == id {
			mine := 0
			for _, r := range routes[fileRoutes:k] {
				if r.Event == id {
					mine++
				}
			}
			return "routes[" + strconv.Itoa(mine) + "]" + tail
		}
	}
	return path
}

// mergePatch applies an RFC 7396 JSON merge patch to a JSON document:
// members of the patch replace the document's, null removes one, and
// objects merge recursively. Both must be JSON objects.
func mergePatch(doc, patch []byte) ([]byte, error) {
	var d, p map[string]any
	if err := decodeObject(doc, &d); err != nil {
		return nil, err
	}
	if err := decodeObject(patch, &p); err != nil {
		return nil, err
	}
	return json.Marshal(merge(d, p))
}

func decodeObject(b []byte, v *map[string]any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil || *v == nil || dec.More() {
		return errors.New("app: a JSON object is required")
	}
	return nil
}

func merge(d, p map[string]any) map[string]any {
	if d == nil {
		d = map[string]any{}
	}
	for k, v := range p {
		switch pv := v.(type) {
		case nil:
			delete(d, k)
		case map[string]any:
			dv, _ := d[k].(map[string]any)
			d[k] = merge(dv, pv)
		default:
			d[k] = v
		}
	}
	return d
}
