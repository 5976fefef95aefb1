package proxy

import (
	"maps"
	"slices"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/jsonenc"
)

// noticeJSON is an event's notice as the status JSON writes it, made
// once per notice: src is the gate's notice it was made from (the
// gate's pointer changes only when the notice does).
type noticeJSON struct {
	src  *admission.Notice
	json []byte
}

// nullNotice is the status field of an event without a notice.
var nullNotice = []byte("null")

// noticeFragment returns the JSON value of the status's "notice" field:
// {"text":"...","texts":{"de":"..."}} or null. A status poll costs one
// atomic load and a pointer comparison; the JSON is made again only
// when the notice changed.
func (ev *event) noticeFragment() []byte {
	if ev.gate == nil {
		return nullNotice
	}
	n := ev.gate.Notice()
	if c := ev.notice.Load(); c != nil && c.src == n {
		return c.json
	}
	c := &noticeJSON{src: n, json: appendNotice(nil, n)}
	ev.notice.Store(c)
	return c.json
}

// appendNotice appends n as JSON (null for nil), languages sorted.
func appendNotice(b []byte, n *admission.Notice) []byte {
	if n == nil {
		return append(b, nullNotice...)
	}
	b = append(b, `{"text":`...)
	b = jsonenc.String(b, n.Text)
	if len(n.Texts) > 0 {
		b = append(b, `,"texts":{`...)
		for i, tag := range slices.Sorted(maps.Keys(n.Texts)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.String(b, tag)
			b = append(b, ':')
			b = jsonenc.String(b, n.Texts[tag])
		}
		b = append(b, '}')
	}
	return append(b, '}')
}
