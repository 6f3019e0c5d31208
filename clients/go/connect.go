package agentregistry

import (
	"time"

	"github.com/nats-io/nats.go"
)

// Connect opens a NATS connection with the defaults a long-running agent or coordinator
// wants: reconnect forever, one second between attempts, a ping every 20 s (a dead link is
// noticed in under a minute). Later options override these.
func Connect(url string, opts ...nats.Option) (*nats.Conn, error) {
	base := []nats.Option{
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.PingInterval(20 * time.Second),
		nats.MaxPingsOutstanding(2),
	}
	return nats.Connect(url, append(base, opts...)...)
}
