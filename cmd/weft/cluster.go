package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-crawler/weft/internal/api"
	"github.com/weft-crawler/weft/internal/cluster"
	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/objstore"
	"github.com/weft-crawler/weft/internal/operator"
)

// clusterPartitions is P for a crawl spread over nodes: the crawl's
// default, the same on every node.
const clusterPartitions = 64

// clusterOpts are the flags of a node of a cluster.
type clusterOpts struct {
	url, node string
	ttl       time.Duration
	replicas  int           // 0: 3 on a cluster of three servers or more, else 1
	advertise string        // the API's address for the other nodes; "" means from --http
	snapEvery time.Duration // 0: this node makes no snapshots
	snapAfter int
}

// runCluster runs this process as node co.node of the crawl whose nodes
// meet at co.url, until ctx is done (then it hands its partitions over to
// the others, their clocks with them, and its crawl stops) or, for weft
// crawl, until the whole cluster's crawl has drained.
func runCluster(ctx context.Context, cfg crawl.Config, co clusterOpts, opts runOpts, stdout, stderr io.Writer) (crawl.Summary, error) {
	natsURL, name := co.url, co.node
	if err := cfg.Validate(); err != nil {
		return crawl.Summary{}, usageError{err}
	}
	if name == "" || strings.ContainsAny(name, ". *>") {
		return crawl.Summary{}, usagef("--node %q: a name for this node, unique in the cluster, without dots, spaces or wildcards", name)
	}
	// A close flushes for at most 10 s, not a minute, on a connection that
	// stopped carrying bytes.
	nc, err := nats.Connect(natsURL, nats.Name("weft node "+name), nats.MaxReconnects(-1), nats.FlusherTimeout(10*time.Second))
	if err != nil {
		return crawl.Summary{}, usagef("--cluster %s: %v", natsURL, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return crawl.Summary{}, err
	}
	if co.replicas == 0 {
		// The server's INFO lists its cluster's other servers.
		co.replicas = 1
		if len(nc.Servers()) >= 3 {
			co.replicas = 3
		}
	}
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	ccfg := cluster.Config{Node: name, Partitions: clusterPartitions, TTL: co.ttl, Replicas: co.replicas, Crawl: cfg, Logger: cfg.Logger,
		SnapshotEvery: co.snapEvery, SnapshotAfter: co.snapAfter,
		// weft crawl ends once the whole cluster has drained; weft serve
		// (a recrawl policy) goes on.
		Drain: cfg.Recrawl == nil}
	if ccfg.SnapshotEvery == 0 {
		ccfg.SnapshotEvery = -1 // none
	}
	if s, ok := cfg.Objects.(*objstore.Store); ok {
		ccfg.Snapshots = s // beside the WARC files, under snapshots/
	}
	node, err := cluster.Start(sctx, js, ccfg)
	cancel()
	if err != nil {
		return crawl.Summary{}, err
	}
	fmt.Fprintf(stderr, "weft: node %s of the cluster at %s (streams of %d replicas, leases of %v)\n", name, natsURL, co.replicas, co.ttl)
	if opts.api != nil {
		acfg := *opts.api
		acfg.Cluster = node
		srv, err := api.New(acfg, operator.Resources(node.Crawler()))
		if err == nil {
			err = srv.Start()
		}
		if err != nil {
			node.Kill()
			node.Crawler().Discard()
			return crawl.Summary{}, err
		}
		fmt.Fprintf(stderr, "weft: operator API on http://%s (metrics at /metrics)\n", srv.Addr())
		addr := co.advertise
		if addr == "" {
			addr = advertised(srv.Addr())
		}
		node.SetAPI(addr)
		defer func() {
			c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			srv.Close(c)
		}()
	}
	// Stopping: the partitions are handed over first, while the crawl
	// still runs (their leases in flight end, their clocks are left), and
	// only then does the crawl stop.
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRun()
	go func() {
		select {
		case <-ctx.Done():
		case <-runCtx.Done(): // the crawl drained: the node has left already
			return
		}
		// A graceful leave gives the leases back. One that has not within
		// 30 s (NATS not answering, a request in flight that cannot log
		// its visit) becomes a kill: the leases run out instead (TTL),
		// and what waited on the node's life gives up.
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		left := make(chan struct{})
		go func() {
			node.Stop(sctx)
			close(left)
		}()
		select {
		case <-left:
		case <-sctx.Done():
			fmt.Fprintf(stderr, "weft: node %s did not hand its partitions over within 30 s; their leases run out instead\n", name)
			node.Kill()
		}
		stopRun()
	}()
	stop := startProgress(runCtx, node.Crawler(), opts.progress, stderr)
	sum, err := node.Run(runCtx)
	stop()
	sum.Write(stdout)
	fmt.Fprintf(stdout, "  data:       %s\n", cfg.DataDir)
	return sum, err
}

// advertised is the address the other nodes reach this node's API at: the
// listen address, with the machine's name for an unspecified host.
func advertised(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		if name, err := os.Hostname(); err == nil {
			return net.JoinHostPort(name, port)
		}
	}
	return addr
}
