package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/frontier"
	wjs "github.com/weft-crawler/weft/internal/jetstream"
	"github.com/weft-crawler/weft/internal/natstest"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/testwait"
)

// TestFencedNodeQueuesNoURLOfALostPartition: a node cut off from NATS
// fences itself, but its releases wait behind one that waits for a
// request out (an external fetcher's lease), as they do behind a worker
// that cannot log its page's links while cut off. Meanwhile another node
// (x, the test) takes a partition p of its, logs a URL u of p's and a
// visit of u. The link comes back before p's release has run. The node
// must not queue u from its old reading of p's log: queued after x's
// visit, u would not count that visit once the node takes p again
// (VisitedElsewhere counts a visit made after the URL was queued), and
// would be fetched a second time, as TestClusterAcceptance once saw of
// an image, fetched by d just before b's link came back and by b once
// its partitions were handed back.
func TestFencedNodeQueuesNoURLOfALostPartition(t *testing.T) {
	ns := startNATS(t)
	link := natstest.NewLink(t, ns.Addr().String())
	const delay = 300 * time.Millisecond // under TTL/2
	var mu sync.Mutex
	var asked []string // host path agent, as the servers saw them
	handler := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			asked = append(asked, name+" "+r.URL.Path+" "+r.UserAgent())
			mu.Unlock()
			switch {
			case r.URL.Path == "/robots.txt":
				http.NotFound(w, r)
			case name == "slow": // a chain: always one URL queued
				n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/e"))
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, `<html><body>slow %d <a href="/e%d">next</a></body></html>`, n, n+1)
			default: // no links
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, `<html><body>%s %s</body></html>`, name, r.URL.Path)
			}
		}
	}
	slow := httptest.NewServer(handler("slow"))
	t.Cleanup(slow.Close)
	// On an address of its own: one server's hosts share a clock (IPGap),
	// and the external lease would hold the fast host too.
	fast := httptest.NewUnstartedServer(handler("fast"))
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	fast.Listener.Close()
	fast.Listener = ln
	fast.Start()
	t.Cleanup(fast.Close)
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
	slowAuth := name("slow", slow, func(p int) bool { return p == q })
	fastAuth := name("fast", fast, func(p int) bool { return p < q })
	p := partition.Of(fastAuth, testParts)
	resolve := map[string]string{strings.Split(slowAuth, ":")[0]: "127.0.0.1", strings.Split(fastAuth, ":")[0]: "127.0.0.2"}
	b := startNodeAt(t, link.URL(), nil, "b", 4, func(c *crawl.Config) {
		c.Seeds = []string{"http://" + slowAuth + "/", "http://" + fastAuth + "/1"}
		c.Fetch.Resolve = resolve
		c.Delay = delay
		c.UserAgent = "weft/b (+https://example.org/weft-crawler)"
	}, nil, false)
	crawler := b.node.Crawler()
	was := func(line string) bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(asked, func(a string) bool { return strings.HasPrefix(a, line) })
	}
	testwait.Eventually(t, time.Minute, "the two hosts' first pages fetched", func() bool { return was("slow / ") && was("fast /1 ") })
	// An external fetcher's lease on the slow host, kept out: partition
	// q's release waits for it.
	ext, err := crawler.LeaseExternal(t.Context(), 1, time.Minute, 10*time.Second)
	if err != nil || len(ext) != 1 || ext[0].Host != slowAuth {
		t.Fatalf("external lease: %+v, %v", ext, err)
	}

	// Node c is announced (by the test) until b has handed 7, 6 and 5
	// over; b's callbacks then wait on q's release.
	_, js := natstest.Connect(t, ns.ClientURL())
	kv, err := js.KeyValue(t.Context(), wjs.DefaultOwnersBucket)
	if err != nil {
		t.Fatal(err)
	}
	testwait.EventuallyNil(t, 30*time.Second, "b handing its extra partitions over", func() error {
		if !b.node.owners.Has(q + 1) {
			return nil
		}
		if _, err := kv.Put(t.Context(), "node.c", []byte("c")); err != nil { // c stays announced
			return err
		}
		return fmt.Errorf("b still holds partition %d", q+1)
	})
	n := b.node
	n.mu.Lock()
	old := n.consumers[p] // p's taking, whose release waits behind q's
	n.mu.Unlock()
	if old == nil || !old.open {
		t.Fatalf("b has not taken partition %d over", p)
	}

	// b is cut off and fences itself; p's lease expires; x takes p, logs
	// u, fetches it and logs the visit, and gives p back.
	link.Cut()
	testwait.Eventually(t, 30*time.Second, "b, cut off, fencing itself", func() bool { return !n.owners.Has(p) })
	key := "p." + strconv.Itoa(p)
	var rev uint64
	testwait.EventuallyNil(t, 30*time.Second, fmt.Sprintf("b's lease of partition %d expiring", p), func() error {
		rev, err = kv.Create(t.Context(), key, []byte("x"))
		return err
	})
	u := "http://" + fastAuth + "/u"
	offer, _ := json.Marshal(crawl.Offered{URL: u, Depth: 1, Priority: frontier.Normal, Via: "http://" + fastAuth + "/1"})
	if _, err := js.Publish(t.Context(), urlSubject(linksPrefix(p), u), offer); err != nil {
		t.Fatal(err)
	}
	xreq, _ := http.NewRequest("GET", fast.URL+"/u", nil)
	xreq.Host = fastAuth
	xreq.Header.Set("User-Agent", "weft/x")
	resp, err := http.DefaultClient.Do(xreq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	visit, _ := json.Marshal(crawl.Visited{URL: u, Record: store.URLRecord{URL: u, LastFetch: time.Now().Add(-time.Millisecond), LastStatus: 200}})
	if _, err := js.Publish(t.Context(), urlSubject(donePrefix(p), u), visit); err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(t.Context(), key, jetstream.LastRevision(rev)); err != nil {
		t.Fatal(err)
	}
	link.Restore()

	// p's old release has not run (it waits behind q's). Either b's old
	// reading of p's log goes on, and queues u, or it has ended with the
	// lease.
	pos := store.URLPos{Part: uint16(p), Host: fastAuth, Hash: seen.KeyOf(u)}
	record := func() (store.URLRecord, bool) {
		pg, err := crawler.Records().Page(pos)
		return pg.Record, err == nil
	}
	testwait.Eventually(t, 30*time.Second, "b's old reading of partition "+strconv.Itoa(p)+" queuing u, or ended", func() bool {
		_, queued := record()
		return queued || old.ctx.Err() != nil
	})
	if r, ok := record(); ok {
		t.Errorf("b queued %s (%v) from partition %d's log after its lease was lost", u, r.Status, p)
	}

	// The releases go on; b takes p again, adopts x's visit and is done
	// with u: by that visit, or by fetching u again.
	if err := crawler.CompleteExternal(ext[0].ID, ext[0].URL, 200, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, time.Minute, "b taking partition "+strconv.Itoa(p)+" again, done with u", func() bool {
		epoch, ok := n.owners.Epoch(p)
		n.mu.Lock()
		tk := n.consumers[p]
		open := ok && tk != nil && tk != old && tk.epoch == epoch && tk.open
		n.mu.Unlock()
		r, found := record()
		return open && found && r.Status != store.URLQueued
	})
	if was("fast /u weft/b") {
		t.Errorf("b fetched %s, which x had fetched while b was cut off", u)
	}
	b.node.Stop(context.Background())
	b.cancel()
	<-b.done
}
