package live_test

import (
	"net"
	"sync"
	"testing"
)

// proxy forwards TCP connections to a target and can black-hole one
// direction (bytes read are dropped, as a stalled network would lose them)
// and cut every connection, so a test can lose acknowledgements mid-flight.
type proxy struct {
	ln     net.Listener
	target string

	mu       sync.Mutex
	dropDown bool // drop broker -> client bytes
	dropUp   bool // drop client -> broker bytes
	conns    []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	t.Cleanup(func() {
		ln.Close()
		p.cut()
	})
	go p.accept()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			down.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, down, up)
		p.mu.Unlock()
		go p.pipe(up, down, func() bool { return p.drop(true) })
		go p.pipe(down, up, func() bool { return p.drop(false) })
	}
}

func (p *proxy) drop(downward bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if downward {
		return p.dropDown
	}
	return p.dropUp
}

// pipe copies src to dst, dropping what arrives while drop() is true; when
// either side ends, both are closed.
func (p *proxy) pipe(src, dst net.Conn, drop func() bool) {
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 && !drop() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// setDrop black-holes (or restores) each direction for every connection.
func (p *proxy) setDrop(down, up bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropDown, p.dropUp = down, up
}

// cut closes every proxied connection on both sides.
func (p *proxy) cut() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}
