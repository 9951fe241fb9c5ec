package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/frontier"
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
	was := func(line string) bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(asked, func(a string) bool { return strings.HasPrefix(a, line) })
	}
	s := startStuckReleases(t, delay, handler, func(host, path string) bool { return was(host + " " + path + " ") })
	n, crawler, p, fastAuth := s.b.node, s.b.node.Crawler(), s.p, s.fastAuth
	n.mu.Lock()
	old := n.consumers[p] // p's taking, whose release waits behind q's
	n.mu.Unlock()
	if old == nil || !old.open {
		t.Fatalf("b has not taken partition %d over", p)
	}

	// b is cut off and fences itself; p's lease expires; x takes p, logs
	// u, fetches it and logs the visit, and gives p back.
	rev := s.cutAndTake(t)
	u := "http://" + fastAuth + "/u"
	offer, _ := json.Marshal(crawl.Offered{URL: u, Depth: 1, Priority: frontier.Normal, Via: "http://" + fastAuth + "/1"})
	if _, err := s.js.Publish(t.Context(), urlSubject(linksPrefix(p), u), offer); err != nil {
		t.Fatal(err)
	}
	s.askFast(t, "/u")
	visit, _ := json.Marshal(crawl.Visited{URL: u, Record: store.URLRecord{URL: u, LastFetch: time.Now().Add(-time.Millisecond), LastStatus: 200}})
	if _, err := s.js.Publish(t.Context(), urlSubject(donePrefix(p), u), visit); err != nil {
		t.Fatal(err)
	}
	s.giveBack(t, rev)

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
	if err := crawler.CompleteExternal(s.ext[0].ID, s.ext[0].URL, 200, time.Now(), ""); err != nil {
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
	n.Stop(context.Background())
	s.b.cancel()
	<-s.b.done
}
