package upstream

import (
	"bufio"
	"io"
	"net"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/internal/ascii"
)

// switchProtocols relays a 101 answer to a WebSocket upgrade and then the
// bytes of both directions, on a connection of its own: fasthttp's server
// hands the client's connection over (Hijack, with no response of its
// own) once the handler returns. The origin's 101 is written by hand, its
// hop-by-hop headers removed but Connection: Upgrade and Upgrade kept.
// When either side ends, both connections are closed; the origin
// connection never returns to the pool. It owns m's pending count and the
// in-flight count from here on.
func (o *Origin) switchProtocols(ctx *fasthttp.RequestCtx, m *member, cc pooledConn, br *bufio.Reader, anon bool) {
	rh := &ctx.Response.Header
	head := make([]byte, 0, 512)
	head = append(head, "HTTP/1.1 101 Switching Protocols\r\n"...)
	upgrade := rh.Peek(fasthttp.HeaderUpgrade)
	for k, v := range rh.All() {
		if ascii.EqualFold(k, "upgrade") || ascii.EqualFold(k, "content-type") || ascii.EqualFold(k, "content-length") ||
			ascii.EqualFold(k, "transfer-encoding") || ascii.EqualFold(k, "connection") || ascii.EqualFold(k, "date") {
			continue
		}
		head = append(append(append(append(head, k...), ": "...), v...), "\r\n"...)
	}
	head = append(head, "Connection: Upgrade\r\nUpgrade: "...)
	if len(upgrade) == 0 {
		upgrade = []byte("websocket")
	}
	head = append(append(head, upgrade...), "\r\n\r\n"...)

	// Bytes the origin sent right after its 101 belong to the client.
	head = append(head, peekBuffered(br)...)
	m.hc.ReleaseReader(br)
	origin := cc.Conn()
	_ = origin.SetDeadline(time.Time{})

	clearResponse(ctx)
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(client net.Conn) {
		defer func() {
			handBack(m.hc.CloseConn, cc)
			m.pending.Add(-1)
			o.leave(anon)
		}()
		// The front server's header or body read deadline is still on
		// the client connection; a WebSocket lives as long as it is open.
		_ = client.SetDeadline(time.Time{})
		if _, err := client.Write(head); err != nil {
			return
		}
		splice(client, origin)
	})
}

// splice copies both ways until one direction ends, then closes both
// connections (which ends the other direction) and waits for it.
func splice(a, b net.Conn) {
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			a.Close()
			b.Close()
		})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(b, a)
		closeBoth()
	}()
	_, _ = io.Copy(a, b)
	closeBoth()
	<-done
}

func peekBuffered(br *bufio.Reader) []byte {
	p, _ := br.Peek(br.Buffered())
	return p
}
