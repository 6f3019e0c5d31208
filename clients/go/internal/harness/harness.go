// Package harness starts the real processes the client's tests run against: a nats-server
// with JetStream on a free port and an agent-registry process connected to it. Each process
// keeps its output for failing tests and is stopped by Stop, whatever happened before.
package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// NATSServerBin is the nats-server binary: $NATS_SERVER_BIN, else the one the repository's
// setup caches, else nats-server on PATH.
func NATSServerBin() string {
	if p := os.Getenv("NATS_SERVER_BIN"); p != "" {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "agent-registry", "nats-server-v2.15.2", "nats-server")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "nats-server"
}

// RegistryBin is the registry's entry point: $AGENT_REGISTRY_BIN, else the repository's
// dist/cli/main.js (npm run build), found relative to this module.
func RegistryBin() string {
	if p := os.Getenv("AGENT_REGISTRY_BIN"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "dist", "cli", "main.js")
}

// FreePort asks the kernel for a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Process is a started child process with its output.
type Process struct {
	Name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

func start(name string, cmd *exec.Cmd) (*Process, error) {
	p := &Process{Name: name, cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Output is what the process wrote so far (stdout and stderr).
func (p *Process) Output() string { return p.out.String() }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop ends the process: SIGTERM, then SIGKILL after 10 s.
func (p *Process) Stop() {
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Kill ends the process at once (SIGKILL), as a crash would.
func (p *Process) Kill() {
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// NATS is a nats-server with JetStream.
type NATS struct {
	*Process
	Port     int
	StoreDir string
	bin      string
}

// URL is the client URL of the server.
func (n *NATS) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.Port) }

// StartNATS starts a nats-server with JetStream in storeDir on a port it picks itself (and
// says in a ports file): a port asked of the kernel here and bound by nats-server later could
// be taken by another process meanwhile. Restart keeps that port.
func StartNATS(storeDir string) (*NATS, error) {
	n := &NATS{StoreDir: storeDir, bin: NATSServerBin()}
	return n, n.launch()
}

func (n *NATS) launch() error {
	portsDir := filepath.Join(n.StoreDir, "ports")
	if err := os.MkdirAll(portsDir, 0o755); err != nil {
		return err
	}
	port := "-1"
	if n.Port != 0 {
		port = strconv.Itoa(n.Port)
	}
	p, err := start("nats-server", exec.Command(n.bin, "-js", "-sd", n.StoreDir, "-a", "127.0.0.1", "-p", port, "--ports_file_dir", portsDir))
	if err != nil {
		return err
	}
	n.Process = p
	return waitUntil(p, 20*time.Second, func() bool {
		if n.Port == 0 {
			if n.Port = listeningPort(portsDir, p.cmd.Process.Pid); n.Port == 0 {
				return false
			}
		}
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", n.Port), 200*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// listeningPort is the client port a nats-server wrote to its ports file
// (<name>_<pid>.ports), or 0 while the file is not there or not complete.
func listeningPort(dir string, pid int) int {
	files, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("*_%d.ports", pid)))
	if len(files) == 0 {
		return 0
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return 0
	}
	var ports struct {
		Nats []string `json:"nats"`
	}
	if json.Unmarshal(data, &ports) != nil || len(ports.Nats) == 0 {
		return 0
	}
	u, err := url.Parse(ports.Nats[0])
	if err != nil {
		return 0
	}
	port, _ := strconv.Atoi(u.Port())
	return port
}

// Restart stops the server and starts it again on the same port and store.
func (n *NATS) Restart() error {
	n.Stop()
	return n.launch()
}

// Registry is an agent-registry process.
type Registry struct {
	*Process
	HTTPPort int
	env      []string
}

// StartRegistry starts `node <registry> serve` against natsURL with env added (KEY=VALUE)
// and waits until /readyz answers 200.
func StartRegistry(natsURL string, env ...string) (*Registry, error) {
	httpPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	r := &Registry{HTTPPort: httpPort}
	r.env = append(os.Environ(),
		"NATS_URL="+natsURL,
		"REGISTRY_EMBEDDED=never",
		"REGISTRY_HTTP_HOST=127.0.0.1",
		"REGISTRY_HTTP_PORT="+strconv.Itoa(httpPort),
		"LOG_LEVEL=warn",
	)
	r.env = append(r.env, env...)
	return r, r.Start()
}

// Start starts the registry process (again, after Stop or Kill) and waits until it is ready.
func (r *Registry) Start() error {
	cmd := exec.Command("node", RegistryBin(), "serve")
	cmd.Env = r.env
	p, err := start("agent-registry", cmd)
	if err != nil {
		return err
	}
	r.Process = p
	client := &http.Client{Timeout: time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", r.HTTPPort)
	return waitUntil(p, 60*time.Second, func() bool {
		res, err := client.Get(url)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

// waitUntil polls ready until it holds, the process exits, or the deadline passes.
func waitUntil(p *Process, timeout time.Duration, ready func() bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		if ready() {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before it was ready (%v):\n%s", p.Name, p.err, p.Output())
		case <-ctx.Done():
			p.Kill()
			return fmt.Errorf("%s not ready after %s:\n%s", p.Name, timeout, p.Output())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 1<<20 {
		s.b.Reset()
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
