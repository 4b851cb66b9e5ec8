package pgtest

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy is a TCP proxy in front of a real PostgreSQL server, for tests of
// a lost database: Down closes every connection through it and refuses
// new ones, as a crashed or unreachable server would; Up serves again on
// the same address. It also counts the round trips clients make through
// it (RoundTrips), for benchmarks that report them.
type Proxy struct {
	t      testing.TB
	addr   string // loopback address the proxy listens on
	target string // the server's host:port
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
	trips  atomic.Int64
}

// RoundTrips is how many round trips every client has made through the
// proxy so far: the frontend messages after which a client waits for the
// server (Sync, which ends an extended-protocol exchange or a pipelined
// batch, and Query, a simple-protocol statement), as the PostgreSQL
// frontend/backend protocol defines them. Connection startup and
// authentication are not counted; a TLS connection is not counted at all.
func (p *Proxy) RoundTrips() int64 { return p.trips.Load() }

// NewProxy starts a proxy to the server of dbURL and returns it with
// dbURL rewritten to go through it. It stops when t ends.
func NewProxy(t testing.TB, dbURL string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("%s does not parse as a URL", EnvVar)
	}
	p := &Proxy{t: t, target: u.Host, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.Down)
	u.Host = p.addr
	return p, u.String()
}

func (p *Proxy) serve(ln net.Listener) {
	p.ln = ln
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.pipe(c)
		}
	}()
}

func (p *Proxy) pipe(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // went down while dialling
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	go func() { _ = p.forward(s, c); s.Close(); c.Close() }()
	_, _ = io.Copy(c, s)
	c.Close()
	s.Close()
}

// Down closes the listener and every proxied connection.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Up listens again on the proxy's address.
func (p *Proxy) Up() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("proxy up again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

// Protocol codes of the untyped first messages that are not a startup:
// after SSLRequest and GSSENCRequest the client starts again (or
// encrypts).
const (
	sslRequest    = 80877103
	gssencRequest = 80877104
)

// forward copies the client's messages c to the server s, counting the
// round trips among them (RoundTrips). A connection that asks for TLS or
// GSS encryption first is copied uncounted.
func (p *Proxy) forward(s io.Writer, c io.Reader) error {
	r := bufio.NewReaderSize(c, 64<<10)
	var head [5]byte
	// The untyped startup message: a length that counts itself, a code.
	if _, err := io.ReadFull(r, head[:4]); err != nil {
		return err
	}
	n := int(binary.BigEndian.Uint32(head[:4]))
	if _, err := s.Write(head[:4]); err != nil {
		return err
	}
	if n < 8 {
		_, err := io.Copy(s, r)
		return err
	}
	start := make([]byte, n-4)
	if _, err := io.ReadFull(r, start); err != nil {
		return err
	}
	if _, err := s.Write(start); err != nil {
		return err
	}
	if code := binary.BigEndian.Uint32(start[:4]); code == sslRequest || code == gssencRequest {
		_, err := io.Copy(s, r) // encrypted, or a startup again: not followed
		return err
	}
	for { // typed messages: one type byte, then a length that counts itself
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return err
		}
		switch head[0] {
		case 'S', 'Q':
			p.trips.Add(1)
		}
		n := int64(binary.BigEndian.Uint32(head[1:])) - 4
		if _, err := s.Write(head[:]); err != nil {
			return err
		}
		if _, err := io.CopyN(s, r, n); err != nil {
			return err
		}
	}
}
