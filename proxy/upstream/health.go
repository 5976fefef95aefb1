package upstream

import (
	"context"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// checkLoop checks m every Health.Interval until ctx ends (see check).
// UnhealthyAfter failures in a row take m out of rotation, HealthyAfter
// passes in a row put it back.
func (o *Origin) checkLoop(ctx context.Context, m *member) {
	hc := &fasthttp.HostClient{
		Addr:                     m.addr,
		DialTimeout:              o.dialer(m.addr),
		MaxConns:                 1,
		ReadBufferSize:           o.cfg.ReadBufferSize,
		MaxResponseBodySize:      64 << 10,
		NoDefaultUserAgentHeader: true,
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer func() {
		fasthttp.ReleaseRequest(req)
		fasthttp.ReleaseResponse(resp)
		hc.CloseIdleConnections()
	}()
	h := &o.cfg.Health
	t := time.NewTicker(h.Interval)
	defer t.Stop()
	fails, passes := 0, 0
	for {
		ok, status, err := o.check(ctx, m, hc, req, resp)
		if ok {
			fails, passes = 0, passes+1
			if passes >= h.HealthyAfter && !m.healthy.Load() {
				o.setHealthy(m, true, nil, status)
			}
		} else {
			fails, passes = fails+1, 0
			if fails >= h.UnhealthyAfter && m.healthy.Load() {
				o.setHealthy(m, false, err, status)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// check checks m once. With Health.Path it is a GET of the path on a
// fresh connection (Connection: close, so a check also proves the address
// accepts connections), passed by any answer below 500 within
// Health.Timeout: an ordinary site without a health endpoint answers 404
// and is up, while a 5xx (a crashed application behind its own front
// server) is not. Without a path it is a TCP connect within
// Health.Timeout. status is the answer's status, 0 for a TCP check.
func (o *Origin) check(ctx context.Context, m *member, hc *fasthttp.HostClient, req *fasthttp.Request, resp *fasthttp.Response) (ok bool, status int, err error) {
	h := &o.cfg.Health
	if h.Path == "" {
		err = o.connectCheck(ctx, m.addr)
		return err == nil, 0, err
	}
	host := o.cfg.Host
	if host == "" {
		host = m.addr
	}
	req.Reset()
	req.SetRequestURI("http://" + m.addr + h.Path)
	req.Header.SetHost(host)
	req.Header.SetUserAgent("waitroom-health-check")
	req.SetConnectionClose()
	err = hc.DoTimeout(req, resp, h.Timeout)
	status = resp.StatusCode()
	return err == nil && status >= 100 && status < 500, status, err
}

// connectCheck opens a connection to addr (through Config.Dial when set)
// within Health.Timeout and closes it.
func (o *Origin) connectCheck(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, o.cfg.Health.Timeout)
	defer cancel()
	var c net.Conn
	var err error
	if o.cfg.Dial != nil {
		c, err = o.cfg.Dial(addr)
	} else {
		var d net.Dialer
		c, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return err
	}
	return c.Close()
}

func (o *Origin) setHealthy(m *member, healthy bool, err error, status int) {
	m.healthy.Store(healthy)
	if healthy {
		o.healthy.Add(1)
		o.log.Info("upstream: address healthy again", "addr", m.addr)
		return
	}
	o.healthy.Add(-1)
	m.hc.CloseIdleConnections()
	if err != nil {
		o.log.Warn("upstream: address unhealthy", "addr", m.addr, "err", err)
	} else {
		o.log.Warn("upstream: address unhealthy", "addr", m.addr, "status", status)
	}
}
