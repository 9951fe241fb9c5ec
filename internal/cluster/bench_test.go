package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
)

// BenchmarkClusterThroughput crawls one web with one node of 12 workers
// and then with three of 4, all in this process on one JetStream server,
// and reports pages per second of each and their ratio. On one machine (two cores here) this
// measures the cost of the cluster's machinery (every URL through the log,
// leases, handoffs), not scaling: three nodes share the same CPUs.
//
//	go test ./internal/cluster -run '^$' -bench ClusterThroughput -benchtime 1x
func BenchmarkClusterThroughput(b *testing.B) {
	for range b.N {
		var rate [2]float64
		for i, nodes := range []int{1, 3} {
			rate[i] = clusterRate(b, nodes)
		}
		b.ReportMetric(rate[0], "pages/s-1node")
		b.ReportMetric(rate[1], "pages/s-3nodes")
		b.ReportMetric(rate[1]/rate[0], "ratio-3/1")
	}
}

func clusterRate(b *testing.B, count int) float64 {
	b.Helper()
	ns := startNATSB(b)
	web := startWeb(b, synthweb.Config{Seed: 30, Hosts: 48, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound, synthweb.RobotsRules}})
	start := time.Now()
	var nodes []*runningNode
	for i := range count {
		// The same 12 workers in all: one node of 12, or three of 4.
		nodes = append(nodes, startNodeTB(b, ns, web, string(rune('a'+i)), 12/count))
	}
	testwait.EventuallyNil(b, 5*time.Minute, "every page fetched", func() error {
		if got, want := progress(web); got != want {
			return fmt.Errorf("%d of %d pages", got, want)
		}
		return nil
	})
	elapsed := time.Since(start)
	_, want := progress(web)
	for _, n := range nodes {
		n.node.Stop(context.Background())
		n.cancel()
		<-n.done
		n.nc.Close()
	}
	return float64(want) / elapsed.Seconds()
}
