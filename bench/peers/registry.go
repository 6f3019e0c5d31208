package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// instancesPerType: the fleet's shape in bench/scenarios/fleet-1m.ts, 100 instances an agent type.
const instancesPerType = 100

var heartbeatBody = []byte(`{"status":"ready","active_tasks":0}`)

// RegistryDriver does the job on the registry over its documented subjects (docs/protocol.md):
// a register request, then heartbeat requests; a watcher subscribed to the registered and
// deregistered events sees instances come and go (an eviction is a deregistered event).
// Heartbeats go out as the fleet-1m load sends them: one request an instance, all replies on
// one inbox subscription, matched to their instance by the reply subject's last token.
type RegistryDriver struct {
	nc, watchNc *nats.Conn
	prefix      string
	types       int
	intervalMs  int64
	inbox       string
	replies     *nats.Subscription
	answered    Answered
}

func NewRegistryDriver(url, prefix string, n int, intervalMs int64, answered Answered) (*RegistryDriver, error) {
	nc, err := nats.Connect(url, nats.Name("peers-load"))
	if err != nil {
		return nil, err
	}
	watchNc, err := nats.Connect(url, nats.Name("peers-watcher"))
	if err != nil {
		nc.Close()
		return nil, err
	}
	d := &RegistryDriver{nc: nc, watchNc: watchNc, prefix: prefix, types: max(1, n/instancesPerType), intervalMs: intervalMs, inbox: nats.NewInbox(), answered: answered}
	d.replies, err = nc.Subscribe(d.inbox+".*", d.reply)
	if err != nil {
		d.Close()
		return nil, err
	}
	// A burst of replies must not be dropped as a slow consumer by the client itself.
	_ = d.replies.SetPendingLimits(-1, -1)
	return d, nc.Flush()
}

func (d *RegistryDriver) agentType(i int) string { return fmt.Sprintf("peers-agent-%05d", i%d.types) }

// spec of agent type t: the smallest spec the registry takes, the same for every instance of a type.
func (d *RegistryDriver) spec(agentType string) string {
	return `{"agent_type":"` + agentType + `","version":"1.0.0","description":"peers benchmark agent","owner_team":"bench",` +
		`"capabilities":[{"name":"bench.peers","description":"answers benchmark tasks","input_schema":{"type":"object"},"output_schema":{"type":"object"}}],` +
		`"nats_subject":"agent.tasks.` + agentType + `","consumer_group":"` + agentType + `"}`
}

func serviceError(msg *nats.Msg) error {
	if code := msg.Header.Get("Nats-Service-Error-Code"); code != "" {
		return fmt.Errorf("%s %s", code, msg.Header.Get("Nats-Service-Error"))
	}
	return nil
}

func (d *RegistryDriver) Register(ctx context.Context, i int) error {
	t := d.agentType(i)
	body := `{"instance_id":"i` + strconv.Itoa(i) + `","heartbeat_interval_ms":` + strconv.FormatInt(d.intervalMs, 10) + `,"spec":` + d.spec(t) + `}`
	// A 503 says when to try again ("retry in N ms"); the client's Agent retries, so does the load.
	for attempt := 1; ; attempt++ {
		msg, err := d.nc.RequestWithContext(ctx, d.prefix+".register."+t, []byte(body))
		if err != nil {
			return err
		}
		err = serviceError(msg)
		wait := retryIn.FindStringSubmatch(msg.Header.Get("Nats-Service-Error"))
		if err == nil || msg.Header.Get("Nats-Service-Error-Code") != "503" || wait == nil || attempt == 5 {
			return err
		}
		ms, _ := strconv.Atoi(wait[1])
		sleep(ctx, time.Duration(ms)*time.Millisecond)
	}
}

var retryIn = regexp.MustCompile(`retry in (\d+) ms`)

// FirstWave: one instance of each agent type, so each spec is validated once.
func (d *RegistryDriver) FirstWave() int { return d.types }

func (d *RegistryDriver) Renew(i int) error {
	return d.nc.PublishRequest(d.prefix+".heartbeat."+d.agentType(i)+".i"+strconv.Itoa(i), d.inbox+"."+strconv.Itoa(i), heartbeatBody)
}

func (d *RegistryDriver) reply(msg *nats.Msg) {
	i, err := strconv.Atoi(msg.Subject[strings.LastIndexByte(msg.Subject, '.')+1:])
	if err != nil {
		return
	}
	if len(msg.Data) == 0 && msg.Header.Get("Status") == "503" {
		d.answered(i, errors.New("no responders"))
		return
	}
	d.answered(i, serviceError(msg))
}

type eventData struct {
	Data struct {
		InstanceID string `json:"instance_id"`
	} `json:"data"`
}

func (d *RegistryDriver) Watch(ctx context.Context, registered func(int), removed func(int)) error {
	on := func(seen func(int)) nats.MsgHandler {
		return func(msg *nats.Msg) {
			var ev eventData
			if json.Unmarshal(msg.Data, &ev) != nil || !strings.HasPrefix(ev.Data.InstanceID, "i") {
				return
			}
			if i, err := strconv.Atoi(ev.Data.InstanceID[1:]); err == nil {
				seen(i)
			}
		}
	}
	for subject, seen := range map[string]func(int){d.prefix + ".agent.registered.>": registered, d.prefix + ".agent.deregistered.>": removed} {
		sub, err := d.watchNc.Subscribe(subject, on(seen))
		if err != nil {
			return err
		}
		_ = sub.SetPendingLimits(-1, -1)
	}
	go func() {
		<-ctx.Done()
		_ = d.watchNc.Drain()
	}()
	return d.watchNc.Flush()
}

func (d *RegistryDriver) Close() {
	d.nc.Close()
	d.watchNc.Close()
}
