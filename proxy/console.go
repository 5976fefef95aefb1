package proxy

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/proxy/console"
)

// mountConsole adds the operator console's routes to the admin mux and
// starts its sampling, which lasts until Close.
func (p *Proxy) mountConsole(mux *http.ServeMux, opts AdminOptions, g prometheus.Gatherer) error {
	c, err := console.New(console.Options{Token: opts.Token, Engine: p.engine, Gatherer: g, Log: p.log, Clock: p.clock})
	if err != nil {
		return err
	}
	c.Register(mux)
	p.console = c
	go c.Run(p.base)
	return nil
}

// StopConsole ends the console's open event streams, so that the admin
// server can shut down without waiting out its grace for them; give it
// to the admin http.Server's RegisterOnShutdown.
func (p *Proxy) StopConsole() {
	if p.console != nil {
		p.console.Stop()
	}
}
