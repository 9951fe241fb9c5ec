package cluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/testwait"
)

// TestRobotsHopAcrossNodes: ten hosts whose robots.txt redirects to a file
// on another host, whose rules apply to them. Where the other host is in a
// partition of the other node, that node makes the hop (under its own
// lease of that host) and sends the decision back. From the servers'
// side: every allowed page is fetched, no disallowed one, some hops were
// made by another node than the one crawling the host, and no host had
// two requests at once.
func TestRobotsHopAcrossNodes(t *testing.T) {
	ns := startNATS(t)
	type req struct {
		host, path, agent string
		start, end        time.Time
	}
	var mu sync.Mutex
	var log []req
	resolve := map[string]string{}
	auth := map[string]string{}
	const pairs = 10
	handler := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			defer func() {
				mu.Lock()
				log = append(log, req{name, r.URL.Path, r.UserAgent(), start, time.Now()})
				mu.Unlock()
			}()
			switch {
			case strings.HasPrefix(name, "a") && r.URL.Path == "/robots.txt":
				mu.Lock()
				target := "http://" + auth["b"+name[1:]] + "/rules.txt"
				mu.Unlock()
				http.Redirect(w, r, target, http.StatusMovedPermanently)
			case r.URL.Path == "/rules.txt":
				io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			case r.URL.Path == "/robots.txt":
				http.NotFound(w, r)
			case r.URL.Path == "/":
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, `<html><body><h1>%s</h1><a href="/ok">ok</a> <a href="/private">private</a></body></html>`, name) // unlike any other: no copy to skip
			default:
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, "<html><body>page %s of %s</body></html>", r.URL.Path, name)
			}
		}
	}
	var seeds []string
	for i := range pairs {
		for _, side := range []string{"a", "b"} {
			name := fmt.Sprintf("%s%d", side, i)
			srv := httptest.NewServer(handler(name))
			t.Cleanup(srv.Close)
			port := srv.Listener.Addr().(*net.TCPAddr).Port
			host := name + ".test"
			mu.Lock()
			auth[name] = fmt.Sprintf("%s:%d", host, port)
			mu.Unlock()
			resolve[host] = "127.0.0.1"
			if side == "a" {
				seeds = append(seeds, "http://"+auth[name]+"/")
			}
		}
	}
	edit := func(name string) func(*crawl.Config) {
		return func(c *crawl.Config) {
			c.Seeds = seeds
			c.UserAgent = "weft/" + name + " (+https://example.org/weft-crawler)"
			c.Fetch.Resolve = resolve
		}
	}
	// Both start paused and go on once each holds its half: the first
	// node up would otherwise hold every partition, and make every hop
	// itself, for as long as the second takes to join.
	nodes := []*runningNode{startNodeOpts(t, ns, nil, "n1", 4, edit("n1"), nil, true), startNodeOpts(t, ns, nil, "n2", 4, edit("n2"), nil, true)}
	testwait.EventuallyNil(t, time.Minute, "each node holding half the partitions", func() error {
		if o1, o2 := nodes[0].node.Owned(), nodes[1].node.Owned(); len(o1) != testParts/2 || len(o2) != testParts/2 {
			return fmt.Errorf("n1 holds %v, n2 %v", o1, o2)
		}
		return nil
	})
	for _, n := range nodes {
		n.node.Crawler().Resume()
	}
	fetched := func(name, path string) (agent string, ok bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range log {
			if r.host == name && r.path == path {
				return r.agent, true
			}
		}
		return "", false
	}
	i := 0
	testwait.EventuallyNil(t, time.Minute, "every a<i>/ok fetched", func() error {
		for ; i < pairs; i++ {
			if _, ok := fetched(fmt.Sprintf("a%d", i), "/ok"); !ok {
				mu.Lock()
				var b strings.Builder
				for _, r := range log {
					fmt.Fprintf(&b, "%s %s %s %s\n", r.start.Format("15:04:05.000"), r.agent[:7], r.host, r.path)
				}
				mu.Unlock()
				for _, n := range nodes {
					l := n.node.Crawler().Live()
					fmt.Fprintf(&b, "%s owns %v; frontier %+v; rejected %v\n", n.name, n.node.Owned(), l.Frontier, l.Summary.Rejected)
				}
				return fmt.Errorf("a%d/ok not fetched: its robots.txt hop did not come back\n%s", i, b.String())
			}
		}
		return nil
	})
	for _, n := range nodes {
		n.node.Stop(context.Background())
		n.cancel()
		<-n.done
	}
	crossed := 0
	for i := range pairs {
		if _, ok := fetched(fmt.Sprintf("a%d", i), "/private"); ok {
			t.Errorf("a%d/private fetched, though b%d/rules.txt, its robots.txt, disallows it", i, i)
		}
		robotsBy, _ := fetched(fmt.Sprintf("a%d", i), "/robots.txt")
		rulesBy, ok := fetched(fmt.Sprintf("b%d", i), "/rules.txt")
		if !ok {
			t.Errorf("b%d/rules.txt never fetched", i)
		}
		if robotsBy != rulesBy {
			crossed++
		}
	}
	t.Logf("%d of %d robots.txt hops made by the other node", crossed, pairs)
	if crossed == 0 {
		t.Error("no hop crossed nodes: the test showed nothing (one chance in a thousand)")
	}
	mu.Lock()
	defer mu.Unlock()
	byHost := map[string][]req{}
	for _, r := range log {
		byHost[r.host] = append(byHost[r.host], r)
	}
	for host, rs := range byHost {
		slices.SortFunc(rs, func(a, b req) int { return a.start.Compare(b.start) })
		for i := 1; i < len(rs); i++ {
			if rs[i].start.Before(rs[i-1].end) {
				t.Errorf("%s: %s started before %s ended", host, rs[i].path, rs[i-1].path)
			}
		}
	}
}
