// Package faultproxy is a TCP proxy that can swallow the server's answers and
// then cut every connection. It stands between a real client and the real
// server to produce the one fault a client cannot tell apart from a lost
// request: the server did the work, and the answer never arrived.
package faultproxy

import (
	"net"
	"sync"
	"sync/atomic"
)

// Proxy forwards connections on Addr to the upstream address.
type Proxy struct {
	ln       net.Listener
	upstream string
	holding  atomic.Bool

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// Start listens on a free loopback port.
func Start(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// HoldAnswers drops every byte from the server from now on; requests still go through.
func (p *Proxy) HoldAnswers() { p.holding.Store(true) }

// Cut closes every open connection and stops dropping; new connections work normally.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holding.Store(false)
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

// Close stops listening and cuts every connection.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.Cut()
	return err
}

func (p *Proxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		upstream, err := net.Dial("tcp", p.upstream)
		if err != nil {
			_ = client.Close()
			continue
		}
		p.mu.Lock()
		p.conns[client] = struct{}{}
		p.conns[upstream] = struct{}{}
		p.mu.Unlock()
		go p.pump(client, upstream, false)
		go p.pump(upstream, client, true)
	}
}

func (p *Proxy) pump(from, to net.Conn, answers bool) {
	defer func() {
		_ = from.Close()
		_ = to.Close()
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 && !(answers && p.holding.Load()) {
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
