package agentregistry_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	ar "github.com/agent-registry/agent-registry/clients/go"
)

// docExamples returns the Go programs of docs/go.md by name: each ```go block that follows a
// <!-- go-example: NAME --> line.
func docExamples(t *testing.T) map[string]string {
	t.Helper()
	text, err := os.ReadFile("../../docs/go.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- go-example: ([a-z-]+) -->\n```go\n(.*?)```")
	out := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(string(text), -1) {
		out[m[1]] = m[2]
	}
	return out
}

// buildExamples builds each example as a program of a module that uses this one through the
// replace line docs/go.md shows, and returns the binaries' directory.
func buildExamples(t *testing.T, examples map[string]string) string {
	t.Helper()
	moduleDir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goMod := fmt.Sprintf("module docexamples\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/agent-registry/agent-registry/clients/go v0.0.0\n\tgithub.com/nats-io/nats.go v1.55.0\n)\n\nreplace github.com/agent-registry/agent-registry/clients/go => %s\n", moduleDir)
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"go.mod": []byte(goMod), "go.sum": sum}
	for name, src := range examples {
		files[filepath.Join(name, "main.go")] = []byte(src)
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "build", "-mod=mod", "-o", filepath.Join(dir, "bin")+"/", "./...")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the examples of docs/go.md: %v\n%s", err, out)
	}
	return filepath.Join(dir, "bin")
}

// TestDocExamples builds the programs of docs/go.md and runs them against a registry: the
// orchestrator answers the same from the file and from the live registry loading it; the
// agent registers, serves the coordinator's task and deregisters on SIGTERM.
func TestDocExamples(t *testing.T) {
	examples := docExamples(t)
	for _, name := range []string{"orchestrator", "agent", "coordinator"} {
		if examples[name] == "" {
			t.Fatalf("docs/go.md has no example %q", name)
		}
	}
	bin := buildExamples(t, examples)
	fleet, err := filepath.Abs("testdata/fleet.json")
	if err != nil {
		t.Fatal(err)
	}
	// A short default interval, so the killed agent below is evicted within a second.
	e := newEnv(t, nil, "REGISTRY_FILE="+fleet, "REGISTRY_DEFAULT_HEARTBEAT_INTERVAL_MS=300")
	environ := append(os.Environ(), "NATS_URL="+e.nats.URL(), "REGISTRY_PREFIX="+e.prefix)
	run := func(name string, extra ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, name))
		cmd.Env = append(append([]string{}, environ...), extra...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		return string(out)
	}

	fromFile := run("orchestrator", "AGENTS_FILE="+fleet)
	want := "route: code-reviewer on agent.tasks.code-reviewer (score 1.60)\ntagged code: bug-fixer\ntagged code: code-reviewer\ntagged code: doc-writer\nbug.fix: bug-fixer <nil>\n"
	if fromFile != want {
		t.Fatalf("orchestrator on the file:\n%s\nwant\n%s", fromFile, want)
	}
	if fromLive := run("orchestrator"); fromLive != fromFile {
		t.Fatalf("orchestrator on the live registry:\n%s\nthe file gave\n%s", fromLive, fromFile)
	}

	var agentOut bytes.Buffer
	agent := exec.Command(filepath.Join(bin, "agent"))
	agent.Env, agent.Stdout, agent.Stderr = environ, &agentOut, &agentOut
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- agent.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = agent.Process.Kill()
			<-exited
		}
	}()
	eventually(t, "the example agent registered", func() bool { return len(e.instances("shouter")) == 1 })

	out := run("coordinator")
	for _, line := range []string{"shouter answered HELLO", "listed: shouter (ready)", "listed: bug-fixer (ready)", "nobody: not_found"} {
		if !strings.Contains(out, line+"\n") {
			t.Fatalf("coordinator output lacks %q:\n%s", line, out)
		}
	}

	if err := agent.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = <-exited
	stopped = true
	if err != nil {
		t.Fatalf("agent exit: %v\n%s", err, agentOut.String())
	}
	// The agent deregistered before it exited; the registry's view shows it a moment later.
	eventually(t, "the stopped agent gone from the registry's view", func() bool { return len(e.instances("shouter")) == 0 })
	if !strings.Contains(agentOut.String(), "registered as ") {
		t.Fatalf("agent output: %s", agentOut.String())
	}

	// Killed (SIGKILL: no drain, no deregistration), the agent is evicted once its heartbeats stop.
	killed := exec.Command(filepath.Join(bin, "agent"))
	killed.Env = environ
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second example agent registered", func() bool { return len(e.instances("shouter")) == 1 })
	if err := killed.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = killed.Wait()
	eventually(t, "the killed agent evicted", func() bool { return len(e.instances("shouter")) == 0 })
	r, err := e.client.List(e.ctx(), ar.ListRequest{Status: []string{ar.StatusDeregistered}})
	if err != nil || len(r.Agents) != 1 || r.Agents[0].AgentType != "shouter" {
		t.Fatalf("after the eviction: %+v %v", r, err)
	}
}
