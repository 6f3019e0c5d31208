package harness

import (
	"fmt"
	"net"
	"sync"
)

// Proxy forwards TCP connections to a target, and can hold every byte (Pause, as a network
// partition would) or cut every connection (Drop, as a lost link would), so a client's
// reconnects and missed heartbeats can be produced on purpose.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	paused bool
	resume *sync.Cond
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// StartProxy listens on a free port of 127.0.0.1 and forwards to target (host:port).
func StartProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.resume = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// URL is the proxy's nats:// URL.
func (p *Proxy) URL() string { return fmt.Sprintf("nats://%s", p.ln.Addr()) }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns[in], p.conns[out] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

// pipe copies from src to dst, waiting while the proxy is paused.
func (p *Proxy) pipe(src, dst net.Conn) {
	defer p.wg.Done()
	defer func() {
		src.Close()
		dst.Close()
		p.mu.Lock()
		delete(p.conns, src)
		delete(p.conns, dst)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.paused {
				p.resume.Wait()
			}
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Pause holds every byte in both directions until Resume; connections stay open.
func (p *Proxy) Pause() {
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
}

// Resume lets the held bytes go on.
func (p *Proxy) Resume() {
	p.mu.Lock()
	p.paused = false
	p.resume.Broadcast()
	p.mu.Unlock()
}

// Drop closes every forwarded connection; new ones are accepted as before.
func (p *Proxy) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// Close stops the proxy and waits for its goroutines.
func (p *Proxy) Close() {
	p.ln.Close()
	p.Resume()
	p.Drop()
	p.wg.Wait()
}
