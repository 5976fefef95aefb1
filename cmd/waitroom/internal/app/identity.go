package app

import (
	"net"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/proxy/httpguard"
	"github.com/waitroom/waitroom/proxy/proxyproto"
)

// proxyProtocol wraps a proxy listener (HTTP, or HTTPS beneath its TLS)
// in a PROXY protocol reader when serve.proxy_protocol is on; otherwise,
// or for a nil listener, it returns ln.
func (w *Waitroom) proxyProtocol(ln net.Listener) net.Listener {
	s := w.cfg.Serve
	if ln == nil || !s.ProxyProtocol {
		return ln
	}
	// Validation refused a malformed list; a nil set would refuse every
	// connection rather than trust a wrong one.
	nets, _ := config.ParseNetworks(s.TrustedProxies)
	pl := proxyproto.NewListener(ln, proxyproto.Config{Trusted: httpguard.NewTrusted(nets).Contains,
		Timeout: s.ProxyProtocolTimeout.Std()})
	w.proxyProto = append(w.proxyProto, pl)
	return pl
}

// registerProxyProtocol adds the PROXY protocol listeners' counts to the
// metrics: waitroom_proxy_protocol_connections_total{result}, result one
// of accepted, untrusted (closed: the peer is not in trusted_proxies),
// malformed (closed: no or a broken header) and timeout (closed: the
// header came too late).
func (w *Waitroom) registerProxyProtocol(reg prometheus.Registerer) {
	if len(w.proxyProto) == 0 {
		return
	}
	sum := func(f func(proxyproto.Stats) uint64) func() float64 {
		return func() float64 {
			var n uint64
			for _, l := range w.proxyProto {
				n += f(l.Stats())
			}
			return float64(n)
		}
	}
	for result, f := range map[string]func(proxyproto.Stats) uint64{
		"accepted":  func(s proxyproto.Stats) uint64 { return s.Accepted },
		"untrusted": func(s proxyproto.Stats) uint64 { return s.Untrusted },
		"malformed": func(s proxyproto.Stats) uint64 { return s.Malformed },
		"timeout":   func(s proxyproto.Stats) uint64 { return s.TimedOut },
	} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "waitroom_proxy_protocol_connections_total",
			Help:        "Connections on the PROXY protocol listeners, by result (accepted, or closed: untrusted peer, malformed header, timeout).",
			ConstLabels: prometheus.Labels{"result": result},
		}, sum(f)))
	}
}
