package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// connectProxy is an HTTP CONNECT proxy on loopback that dials every
// tunnel from one local address. Chromium cannot choose its source
// address, and every strategy must come from an address (and a /24) of
// its own, or one strategy's joins would count in the next one's rate
// signals; through this proxy, the waiting room sees the proxy's chosen
// address as the client. The tunnel carries the browser's TLS untouched,
// so its ClientHello (JA4) and its requests are the browser's own.
type connectProxy struct {
	ln     net.Listener
	local  string
	target string // the one host:port tunnels may go to
}

func startConnectProxy(local, target string) (*connectProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &connectProxy{ln: ln, local: local, target: target}
	go p.serve()
	return p, nil
}

func (p *connectProxy) addr() string { return p.ln.Addr().String() }

func (p *connectProxy) close() { p.ln.Close() }

func (p *connectProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.tunnel(c)
	}
}

func (p *connectProxy) tunnel(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	if req.Method != http.MethodConnect || req.Host != p.target {
		io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
		return
	}
	c.SetReadDeadline(time.Time{})
	d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(p.local)}}
	up, err := d.Dial("tcp", p.target)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	defer up.Close()
	io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, br); up.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
	<-done
}

// recorded is one request as a browser sent it: the header lines in wire
// order and case, and the body.
type recorded struct {
	method, path string
	headers      [][2]string
	body         []byte
}

// recorder terminates TLS with the benchmark's certificate, records every
// request head and body a browser sends, and forwards the bytes to the
// waiting room over TLS from its own address. It is only for learning
// what Chromium sends (the go-chrome bot copies it); the strategies
// measured never go through it.
type recorder struct {
	ln     net.Listener
	target string
	local  string
	tlsCfg *tls.Config // towards the waiting room
	mu     sync.Mutex
	reqs   []recorded
	ch     chan struct{}
}

func startRecorder(c *certs, local, target string) (*recorder, error) {
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{c.pair}, NextProtos: []string{"http/1.1"}})
	if err != nil {
		return nil, err
	}
	r := &recorder{ln: ln, target: target, local: local, tlsCfg: &tls.Config{RootCAs: c.pool}, ch: make(chan struct{}, 64)}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go r.forward(conn)
		}
	}()
	return r, nil
}

func (r *recorder) addr() string { return r.ln.Addr().String() }
func (r *recorder) close()       { r.ln.Close() }

func (r *recorder) forward(c net.Conn) {
	defer c.Close()
	d := &net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(r.local)}}
	up, err := tls.DialWithDialer(d, "tcp", r.target, r.tlsCfg)
	if err != nil {
		return
	}
	defer up.Close()
	go io.Copy(c, up)
	br := bufio.NewReader(c)
	for {
		var head bytes.Buffer
		var rec recorded
		n := int64(0)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			head.WriteString(line)
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if rec.method == "" {
				f := strings.Fields(line)
				if len(f) < 2 {
					return
				}
				rec.method, rec.path = f[0], f[1]
				continue
			}
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimSpace(v)
			rec.headers = append(rec.headers, [2]string{k, v})
			if strings.EqualFold(k, "Content-Length") {
				n, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		rec.body = make([]byte, n)
		if _, err := io.ReadFull(br, rec.body); err != nil {
			return
		}
		if _, err := up.Write(append(head.Bytes(), rec.body...)); err != nil {
			return
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, rec)
		r.mu.Unlock()
		select {
		case r.ch <- struct{}{}:
		default:
		}
	}
}

// find returns the last recorded request with method whose path starts
// with prefix.
func (r *recorder) find(method, prefix string) (recorded, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.reqs) - 1; i >= 0; i-- {
		if r.reqs[i].method == method && strings.HasPrefix(r.reqs[i].path, prefix) {
			return r.reqs[i], true
		}
	}
	return recorded{}, false
}
