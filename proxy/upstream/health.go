package upstream

import (
	"context"
	"time"

	"github.com/valyala/fasthttp"
)

// checkLoop checks m every Health.Interval until ctx ends: GET
// Health.Path on a fresh connection (Connection: close, so a check also
// proves the address accepts connections), passed by a 2xx or 3xx answer
// within Health.Timeout. UnhealthyAfter failures in a row take m out of
// rotation, HealthyAfter passes in a row put it back.
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
	host := o.cfg.Host
	if host == "" {
		host = m.addr
	}
	h := &o.cfg.Health
	t := time.NewTicker(h.Interval)
	defer t.Stop()
	fails, passes := 0, 0
	for {
		req.Reset()
		req.SetRequestURI("http://" + m.addr + h.Path)
		req.Header.SetHost(host)
		req.Header.SetUserAgent("waitroom-health-check")
		req.SetConnectionClose()
		err := hc.DoTimeout(req, resp, h.Timeout)
		status := resp.StatusCode()
		if err == nil && status >= 200 && status < 400 {
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
