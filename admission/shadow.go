package admission

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"hash"
	"io"
	"sort"
	"sync"
)

// The shadow queue. The bot defence may place a visitor it is confident
// is automated in the shadow queue: they join like anyone, are drawn like
// anyone (their id is in the public audit, their ticket gets its number),
// and their position falls as the serving counter moves, but they are
// never admitted. Nothing they receive marks them: their visitor id is 12
// random bytes and 4 bytes of HMAC-SHA256(ShadowKey, event, those 12),
// which without the key cannot be told from 16 random bytes; every other
// visitor id is drawn again in the rare case it carries the mark.
//
// The leader passes over shadow numbers when it advances the serving
// counter (they take no admission), and a shadowed visitor whose number
// is reached is told to wait (position 0), as a real visitor who came back
// late is for a tick, until their turn ends ("session_ended").

// shadowTagLen is the length of the mark at the end of a shadow id.
const shadowTagLen = 4

// shadowTag is the mark of id's first bytes for event under key.
func shadowTag(key []byte, event string, id *VisitorID) [shadowTagLen]byte {
	m := shadowMACs.Get().(*shadowMAC)
	if m.h == nil || !bytes.Equal(m.key, key) {
		m.key, m.h = bytes.Clone(key), hmac.New(sha256.New, key)
	} else {
		m.h.Reset()
	}
	m.buf = append(append(m.buf[:0], event...), 0)
	m.buf = append(m.buf, id[:len(id)-shadowTagLen]...)
	m.h.Write(m.buf)
	var sum [sha256.Size]byte
	tag := [shadowTagLen]byte(m.h.Sum(sum[:0]))
	shadowMACs.Put(m)
	return tag
}

// shadowMAC is a keyed HMAC kept for the next shadowTag: every join
// computes one, and keying a new HMAC costs two SHA-256 blocks and four
// allocations.
type shadowMAC struct {
	key []byte
	h   hash.Hash
	buf []byte
}

var shadowMACs = sync.Pool{New: func() any { return new(shadowMAC) }}

// shadowed reports whether v is a shadow visitor of the event.
func (ev *event) shadowed(v *VisitorID) bool {
	key := ev.e.opts.ShadowKey
	if len(key) == 0 {
		return false
	}
	tag := shadowTag(key, ev.conf().ID, v)
	return hmac.Equal(tag[:], v[len(v)-shadowTagLen:])
}

// newVisitor mints a visitor id: marked for the shadow queue, or one
// that carries no mark.
func (ev *event) newVisitor(shadow bool) (VisitorID, error) {
	var v VisitorID
	for {
		if _, err := io.ReadFull(ev.e.opts.Rand, v[:]); err != nil {
			return v, err
		}
		if len(ev.e.opts.ShadowKey) == 0 {
			return v, nil
		}
		if shadow {
			tag := shadowTag(ev.e.opts.ShadowKey, ev.conf().ID, &v)
			copy(v[len(v)-shadowTagLen:], tag[:])
			return v, nil
		}
		if !ev.shadowed(&v) {
			return v, nil
		}
	}
}

// CanShadow reports whether the engine has a shadow key, so that joins
// may ask for the shadow queue.
func (e *Engine) CanShadow() bool { return len(e.opts.ShadowKey) > 0 }

// Shadowed reports whether visitor v of an event is in the shadow queue
// (for operators and tests; the request path never needs to ask).
func (e *Engine) Shadowed(id string, v VisitorID) bool {
	ev := e.lookup(id)
	return ev != nil && ev.shadowed(&v)
}

// shadowAt reports whether number n went to a shadow visitor (false when
// the engine has no shadow key or n's draw is not loaded here).
func (l *lane) shadowAt(n uint64) bool {
	if len(l.event.e.opts.ShadowKey) == 0 {
		return false
	}
	l.mu.RLock()
	draws := l.drawList
	i := sort.Search(len(draws), func(i int) bool { return draws[i].Next() > n })
	var v VisitorID
	ok := false
	if i < len(draws) && n >= draws[i].First {
		if d := l.draws[draws[i].Tranche]; d != nil && d.ordered != nil && n-d.draw.First < uint64(len(d.ordered)) {
			v, ok = d.ordered[n-d.draw.First], true
		}
	}
	l.mu.RUnlock()
	return ok && l.event.shadowed(&v)
}
