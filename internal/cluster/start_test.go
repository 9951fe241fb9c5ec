package cluster

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/natstest"
)

// TestStartsTogetherOnANewCluster: three nodes started at the same moment
// against a three-server JetStream cluster that has only just elected its
// meta leader. Each makes or opens the crawl's streams and buckets while
// the others do, and while the cluster may not know all its peers yet
// ("no suitable peers for placement") or a bucket just made has no
// leader yet ("stream not found"): every start waits those out, and none
// fails, in any of 20 rounds.
func TestStartsTogetherOnANewCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("20 three-server NATS clusters")
	}
	const rounds = 20
	var failed atomic.Int32
	t.Run("rounds", func(t *testing.T) {
		for round := range rounds {
			t.Run(fmt.Sprint(round), func(t *testing.T) {
				// Two clusters at a time (-test.parallel): a round mostly
				// waits for its elections, and one start beside another's
				// is as much a test of the wait as one alone.
				t.Parallel()
				startTogether(t, &failed)
			})
		}
	})
	t.Logf("%d of %d starts failed", failed.Load(), 3*rounds)
}

// startTogether starts three nodes at once on a new three-server cluster,
// counting in failed those that do not start.
func startTogether(t *testing.T, failed *atomic.Int32) {
	c := natstest.StartCluster(t)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, name := range []string{"a", "b", "c"} {
		_, js := natstest.Connect(t, c.Servers[i].ClientURL())
		cfg := Config{Node: name, Partitions: testParts, TTL: testTTL, Replicas: 3,
			Crawl: crawl.Config{Seeds: []string{"http://a.test/"}, DataDir: t.TempDir(), UserAgent: "weft/test", Delay: testDelay}}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			n, err := Start(ctx, js, cfg)
			if errs[i] = err; err != nil {
				return
			}
			n.Kill()
			stopped, stop := context.WithCancel(t.Context())
			stop()
			n.Run(stopped)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			failed.Add(1)
			t.Errorf("node %d of 3 did not start: %v", i+1, err)
		}
	}
}
