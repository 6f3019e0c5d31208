// Command etcd is etcd's own server, built from the Go module proxy at the version pinned in
// go.mod (go.etcd.io/etcd/server/v3). etcd publishes no main package in a module the proxy
// serves here, so this is the two lines of etcd's own main: the peers benchmark runs a
// current etcd (newer than Debian's 3.4.23) without a download site beyond the module proxy.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
