//go:build !linux

package harness

import "os/exec"

// dieWithParent does nothing where the kernel has no parent-death signal: TestMain and the
// tests' cleanups stop the servers.
func dieWithParent(*exec.Cmd) {}
