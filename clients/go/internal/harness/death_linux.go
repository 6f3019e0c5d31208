package harness

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the child should the test binary die (a panic, a
// timeout) before it stops its servers.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
