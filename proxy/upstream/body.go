package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/waitroom/waitroom/internal/ascii"
)

// Errors of a streamed response body; the client's connection is closed
// when one happens (the status line is already out).
var (
	errBadChunk    = errors.New("upstream: malformed chunked response body")
	errBodyTooLong = errors.New("upstream: response body exceeds the limit")
)

// maxChunkLine bounds a chunk-size line (size and extensions).
const maxChunkLine = 4096

// body streams a response body from the origin's connection to the
// client. fasthttp's server reads it after the handler has returned (with
// WriteTo: bytes go from the origin's read buffer to the client's write
// buffer without another copy) and calls Close when done, which hands the
// connection back to the pool — or closes it when the body was not read to
// its end. It decodes a chunked body and enforces MaxResponseBodySize.
type body struct {
	o    *Origin
	m    *member
	cc   pooledConn
	br   *bufio.Reader
	conn interface{ SetReadDeadline(time.Time) error }

	mode    bodyMode
	left    int   // bytes left: of the body (fixed) or of the chunk (chunked)
	total   int64 // bytes relayed
	max     int64
	crlf    bool // a chunk's data ended: its CRLF comes next
	done    bool // the body ended cleanly
	reuse   bool // the origin keeps the connection alive
	closed  bool
	anon    bool // counted as not admitted (Forward.Admitted false)
	readErr error
}

type bodyMode uint8

const (
	modeFixed   bodyMode = iota // Content-Length
	modeChunked                 // Transfer-Encoding: chunked
	modeEOF                     // until the origin closes the connection
)

var bodyPool = sync.Pool{New: func() any { return new(body) }}

func acquireBody(o *Origin, m *member, cc pooledConn, br *bufio.Reader, length int, reuse bool) *body {
	b := bodyPool.Get().(*body)
	*b = body{o: o, m: m, cc: cc, br: br, conn: cc.Conn(), reuse: reuse, max: o.cfg.MaxResponseBodySize}
	switch {
	case length >= 0:
		b.mode, b.left = modeFixed, length
		b.done = length == 0
	case length == -1:
		b.mode = modeChunked
	default:
		b.mode, b.reuse = modeEOF, false
	}
	return b
}

// SupportsBodyWriteTo lets fasthttp use WriteTo (fasthttp.BodyWriterTo).
func (b *body) SupportsBodyWriteTo() bool { return true }

// Read implements io.Reader.
func (b *body) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	avail, err := b.next()
	n := copy(p, avail)
	b.consume(n)
	if n > 0 {
		return n, nil
	}
	return 0, err
}

// WriteTo writes the body to w as it arrives. When the origin has nothing
// more buffered, w is flushed (if it can be) before waiting: an event
// stream's events reach the client at once.
func (b *body) WriteTo(w io.Writer) (int64, error) {
	var written int64
	flusher, _ := w.(interface{ Flush() error })
	for {
		if flusher != nil && b.br.Buffered() == 0 && !b.done {
			if err := flusher.Flush(); err != nil {
				return written, err
			}
		}
		avail, err := b.next()
		if len(avail) > 0 {
			n, werr := w.Write(avail)
			b.consume(n)
			written += int64(n)
			if werr != nil {
				return written, werr
			}
			continue
		}
		if err == io.EOF {
			return written, nil
		}
		if err != nil {
			return written, err
		}
	}
}

// next returns body bytes available now, waiting for some when none is
// buffered; io.EOF at the end of the body.
func (b *body) next() ([]byte, error) {
	if b.readErr != nil {
		return nil, b.readErr
	}
	if b.done {
		return nil, io.EOF
	}
	if b.mode == modeChunked && b.left == 0 {
		if err := b.chunkHeader(); err != nil {
			return nil, b.fail(err)
		}
		if b.done {
			return nil, io.EOF
		}
	}
	if err := b.fill(); err != nil {
		if err == io.EOF && b.mode == modeEOF {
			b.done = true
			return nil, io.EOF
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, b.fail(err)
	}
	n := b.br.Buffered()
	if b.mode != modeEOF {
		n = min(n, b.left)
	}
	if b.max > 0 {
		if b.total >= b.max {
			return nil, b.fail(errBodyTooLong)
		}
		n = int(min(int64(n), b.max-b.total))
	}
	p, _ := b.br.Peek(n)
	return p, nil
}

// consume marks n bytes returned by next as relayed.
func (b *body) consume(n int) {
	if n == 0 {
		return
	}
	_, _ = b.br.Discard(n)
	b.total += int64(n)
	switch b.mode {
	case modeFixed:
		b.left -= n
		b.done = b.left == 0
	case modeChunked:
		b.left -= n
		b.crlf = b.left == 0
	}
}

// fill makes sure at least one byte is buffered, waiting at most
// ReadTimeout for it.
func (b *body) fill() error {
	if b.br.Buffered() > 0 {
		return nil
	}
	if err := b.conn.SetReadDeadline(time.Now().Add(b.o.cfg.ReadTimeout)); err != nil {
		return err
	}
	_, err := b.br.Peek(1)
	return err
}

// chunkHeader reads the CRLF that ends the previous chunk's data (if
// any), then the next chunk-size line. A zero size ends the body: the
// trailer section is read and dropped.
func (b *body) chunkHeader() error {
	if b.crlf {
		if err := b.expect('\r', '\n'); err != nil {
			return err
		}
		b.crlf = false
	}
	line, err := b.line()
	if err != nil {
		return err
	}
	size, ok := parseChunkSize(line)
	if !ok {
		return errBadChunk
	}
	if size > 0 {
		b.left = size
		return nil
	}
	for { // the trailer section, up to an empty line
		line, err := b.line()
		if err != nil {
			return err
		}
		if len(line) == 0 {
			b.done = true
			return nil
		}
	}
}

// line reads a CRLF-terminated line (without the CRLF) of at most
// maxChunkLine bytes. The slice is valid until the next read.
func (b *body) line() ([]byte, error) {
	for {
		buf, _ := b.br.Peek(b.br.Buffered())
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			if i == 0 || buf[i-1] != '\r' {
				return nil, errBadChunk
			}
			_, _ = b.br.Discard(i + 1)
			return buf[:i-1], nil
		}
		if len(buf) >= maxChunkLine || len(buf) == b.br.Size() {
			return nil, errBadChunk
		}
		if err := b.conn.SetReadDeadline(time.Now().Add(b.o.cfg.ReadTimeout)); err != nil {
			return nil, err
		}
		if _, err := b.br.Peek(len(buf) + 1); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

func (b *body) expect(c1, c2 byte) error {
	for _, c := range [2]byte{c1, c2} {
		if err := b.fill(); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		got, _ := b.br.ReadByte()
		if got != c {
			return errBadChunk
		}
	}
	return nil
}

func (b *body) fail(err error) error {
	if b.readErr == nil {
		b.readErr = fmt.Errorf("upstream: relaying the response body: %w", err)
	}
	b.done = false
	return b.readErr
}

// Close hands the connection back (or closes it when the body did not end
// cleanly) and ends the request's in-flight count. fasthttp calls it once
// the response is written, or when the response is reset.
func (b *body) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if b.readErr != nil && !errors.Is(b.readErr, errBodyTooLong) {
		b.o.log.Debug("upstream: response body broke", "addr", b.m.addr, "err", b.readErr)
	}
	b.o.release(b.m, b.cc, b.br, b.done && b.reuse && b.readErr == nil)
	b.o.leave(b.anon)
	*b = body{}
	bodyPool.Put(b)
	return nil
}

// parseChunkSize parses a chunk-size line: 1 to 15 hex digits, then
// optionally ";" and extensions (ignored, but free of control
// characters). Whitespace after the size is refused, as Go's and
// fasthttp's readers refuse it in places: no two parsers should disagree
// on a body waitroom relays.
func parseChunkSize(line []byte) (int, bool) {
	n, i := 0, 0
	for ; i < len(line); i++ {
		v, ok := ascii.Unhex(line[i])
		if !ok {
			break
		}
		if i == 15 {
			return 0, false
		}
		n = n<<4 | int(v)
	}
	if i == 0 || (i < len(line) && line[i] != ';') {
		return 0, false
	}
	for _, c := range line[i:] {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return 0, false
		}
	}
	return n, true
}
