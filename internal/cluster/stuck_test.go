package cluster

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-crawler/weft/internal/crawl"
	wjs "github.com/weft-crawler/weft/internal/jetstream"
	"github.com/weft-crawler/weft/internal/live"
	"github.com/weft-crawler/weft/internal/natstest"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/testwait"
)

// stuckReleases is a node b, reached through a link the test can cut,
// whose partitions' releases queue behind one that waits for a request
// out: an external fetcher's lease on its slow host, in partition q, kept
// out. Its fast host is in a partition p that b keeps. It is the world of
// the tests of what b does with a partition it lost while cut off.
type stuckReleases struct {
	b        *runningNode
	link     *natstest.Link
	fast     *httptest.Server
	fastAuth string
	p        int
	ext      []live.Lease // the external lease on the slow host
	js       jetstream.JetStream
	kv       jetstream.KeyValue // the lease bucket
	slowAuth string
}

// startStuckReleases starts the two hosts (handler serves each, by name:
// "slow", a chain that keeps one URL queued, and "fast"), node b at the
// delay, and waits until b has fetched both hosts' first pages (asked
// reads the servers' log), holds the external lease and has handed its
// extra partitions over to a node c the test announces: from then on,
// b's releases wait behind q's.
func startStuckReleases(t *testing.T, delay time.Duration, handler func(name string) http.HandlerFunc, asked func(host, path string) bool) *stuckReleases {
	t.Helper()
	ns := startNATS(t)
	s := &stuckReleases{link: natstest.NewLink(t, ns.Addr().String())}
	slow := httptest.NewServer(handler("slow"))
	t.Cleanup(slow.Close)
	// On an address of its own: one server's hosts share a clock (IPGap),
	// and the external lease would hold the fast host too.
	s.fast = httptest.NewUnstartedServer(handler("fast"))
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	s.fast.Listener.Close()
	s.fast.Listener = ln
	s.fast.Start()
	t.Cleanup(s.fast.Close)
	// With a second node announced, b keeps partitions 0-3 and hands 7,
	// 6, 5 and then 4 over: the slow host is in 4, the fast one below.
	const q = testParts / 2
	name := func(prefix string, srv *httptest.Server, want func(int) bool) string {
		for i := 0; ; i++ {
			if a := fmt.Sprintf("%s%d.test:%d", prefix, i, srv.Listener.Addr().(*net.TCPAddr).Port); want(partition.Of(a, testParts)) {
				return a
			}
		}
	}
	s.slowAuth = name("slow", slow, func(p int) bool { return p == q })
	s.fastAuth = name("fast", s.fast, func(p int) bool { return p < q })
	s.p = partition.Of(s.fastAuth, testParts)
	resolve := map[string]string{strings.Split(s.slowAuth, ":")[0]: "127.0.0.1", strings.Split(s.fastAuth, ":")[0]: "127.0.0.2"}
	s.b = startNodeAt(t, s.link.URL(), nil, "b", 4, func(c *crawl.Config) {
		c.Seeds = []string{"http://" + s.slowAuth + "/", "http://" + s.fastAuth + "/1"}
		c.Fetch.Resolve = resolve
		c.Delay = delay
		c.UserAgent = "weft/b (+https://example.org/weft-crawler)"
	}, nil, false)
	crawler := s.b.node.Crawler()
	testwait.Eventually(t, time.Minute, "the two hosts' first pages fetched", func() bool { return asked("slow", "/") && asked("fast", "/1") })
	// An external fetcher's lease on the slow host, kept out: partition
	// q's release waits for it.
	if _, err := crawler.Hosts().Hold(s.fastAuth, true); err != nil {
		t.Fatal(err)
	}
	s.ext, err = crawler.LeaseExternal(t.Context(), 1, time.Minute, 10*time.Second)
	if err != nil || len(s.ext) != 1 || s.ext[0].Host != s.slowAuth {
		t.Fatalf("external lease: %+v, %v", s.ext, err)
	}
	crawler.Hosts().Hold(s.fastAuth, false)

	// Node c is announced (by the test) until b has handed 7, 6 and 5
	// over; b's callbacks then wait on q's release.
	_, s.js = natstest.Connect(t, ns.ClientURL())
	if s.kv, err = s.js.KeyValue(t.Context(), wjs.DefaultOwnersBucket); err != nil {
		t.Fatal(err)
	}
	testwait.EventuallyNil(t, 30*time.Second, "b handing its extra partitions over", func() error {
		if !s.b.node.owners.Has(q + 1) {
			return nil
		}
		if _, err := s.kv.Put(t.Context(), "node.c", []byte("c")); err != nil { // c stays announced
			return err
		}
		return fmt.Errorf("b still holds partition %d", q+1)
	})
	return s
}

// cutAndTake cuts b off, waits until it has fenced itself off partition
// p and p's lease has expired, and takes p as node x: it returns the
// revision to give p back at.
func (s *stuckReleases) cutAndTake(t *testing.T) (rev uint64) {
	t.Helper()
	s.link.Cut()
	testwait.Eventually(t, 30*time.Second, "b, cut off, fencing itself", func() bool { return !s.b.node.owners.Has(s.p) })
	testwait.EventuallyNil(t, 30*time.Second, fmt.Sprintf("b's lease of partition %d expiring", s.p), func() (err error) {
		rev, err = s.kv.Create(t.Context(), s.partKey(), []byte("x"))
		return err
	})
	return rev
}

// giveBack gives partition p back, as node x, and restores b's link.
func (s *stuckReleases) giveBack(t *testing.T, rev uint64) {
	t.Helper()
	if err := s.kv.Delete(t.Context(), s.partKey(), jetstream.LastRevision(rev)); err != nil {
		t.Fatal(err)
	}
	s.link.Restore()
}

func (s *stuckReleases) partKey() string { return "p." + strconv.Itoa(s.p) }

// askFast asks the fast host for path as node x would.
func (s *stuckReleases) askFast(t *testing.T, path string) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.fast.URL+path, nil)
	req.Host = s.fastAuth
	req.Header.Set("User-Agent", "weft/x")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
