package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// keyPrefix holds one key per instance, each attached to the instance's lease.
const keyPrefix = "/peers/"

// EtcdDriver builds service liveness the standard way on etcd: an instance is a lease (TTL
// of Missed intervals) with its key attached, renewed on the v3 LeaseKeepAlive stream, and a
// watcher of the key prefix sees a PUT when one registers and a DELETE when its lease expires.
type EtcdDriver struct {
	cli      *clientv3.Client
	watchCli *clientv3.Client
	ttl      int64
	answered Answered

	mu     sync.Mutex
	leases []clientv3.LeaseID
	index  map[clientv3.LeaseID]int
	// streams are the keepalive streams clientv3's lessor opens, several so that one stream's
	// in-order handling on the server does not cap the rate (the server answers each stream
	// one request after the other); instance i renews on stream i % len(streams).
	streams []pb.Lease_LeaseKeepAliveClient
	cancel  context.CancelFunc
}

func NewEtcdDriver(endpoint string, n int, ttl time.Duration, streams int, answered Answered) (*EtcdDriver, error) {
	// clientv3's defaults, as its documentation gives them, but for the dial timeout.
	cfg := clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, err
	}
	// The watcher is another party: its own client and connection.
	watchCli, err := clientv3.New(cfg)
	if err != nil {
		cli.Close()
		return nil, err
	}
	d := &EtcdDriver{cli: cli, watchCli: watchCli, ttl: int64(ttl / time.Second), answered: answered, leases: make([]clientv3.LeaseID, n), index: make(map[clientv3.LeaseID]int, n)}
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	lc := pb.NewLeaseClient(cli.ActiveConnection())
	for s := 0; s < streams; s++ {
		st, err := lc.LeaseKeepAlive(ctx)
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("keepalive stream: %w", err)
		}
		d.streams = append(d.streams, st)
		go d.receive(st)
	}
	return d, nil
}

func (d *EtcdDriver) receive(st pb.Lease_LeaseKeepAliveClient) {
	for {
		resp, err := st.Recv()
		if err != nil {
			return // the stream closed; renewals left unanswered are counted lost
		}
		d.mu.Lock()
		i, ok := d.index[clientv3.LeaseID(resp.ID)]
		d.mu.Unlock()
		if !ok {
			continue
		}
		if resp.TTL <= 0 {
			d.answered(i, errors.New("lease not found (expired)"))
		} else {
			d.answered(i, nil)
		}
	}
}

func (d *EtcdDriver) Register(ctx context.Context, i int) error {
	lease, err := d.cli.Grant(ctx, d.ttl)
	if err != nil {
		return fmt.Errorf("grant: %w", err)
	}
	d.mu.Lock()
	d.leases[i] = lease.ID
	d.index[lease.ID] = i
	d.mu.Unlock()
	if _, err := d.cli.Put(ctx, keyPrefix+strconv.Itoa(i), `{"endpoint":"nats:agent.tasks.bench","status":"ready"}`, clientv3.WithLease(lease.ID)); err != nil {
		return fmt.Errorf("put: %w", err)
	}
	return nil
}

func (d *EtcdDriver) Renew(i int) error {
	d.mu.Lock()
	id := d.leases[i]
	d.mu.Unlock()
	return d.streams[i%len(d.streams)].Send(&pb.LeaseKeepAliveRequest{ID: int64(id)})
}

func (d *EtcdDriver) Watch(ctx context.Context, registered func(int), removed func(int)) error {
	wc := d.watchCli.Watch(clientv3.WithRequireLeader(ctx), keyPrefix, clientv3.WithPrefix(), clientv3.WithCreatedNotify())
	// The created notification says the watch is in place before any registration is sent.
	first, ok := <-wc
	if !ok || first.Err() != nil {
		return fmt.Errorf("watch not created: %v", first.Err())
	}
	go func() {
		for resp := range wc {
			for _, ev := range resp.Events {
				i, err := strconv.Atoi(strings.TrimPrefix(string(ev.Kv.Key), keyPrefix))
				if err != nil {
					continue
				}
				switch {
				case ev.Type == mvccpb.DELETE:
					removed(i)
				case ev.IsCreate():
					registered(i)
				}
			}
		}
	}()
	return nil
}

// FirstWave: etcd has nothing to prepare per kind of instance.
func (d *EtcdDriver) FirstWave() int { return 0 }

func (d *EtcdDriver) Close() {
	d.cancel()
	d.cli.Close()
	d.watchCli.Close()
}
