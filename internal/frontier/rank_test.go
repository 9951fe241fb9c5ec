package frontier

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// rankedItems returns items of host with the given ranks, in that order.
func rankedItems(host string, ranks ...uint32) []Item {
	out := make([]Item, len(ranks))
	for i, r := range ranks {
		out[i] = Item{URL: fmt.Sprintf("http://%s/%02d-r%d", host, i, r), Host: host, Priority: Normal, Rank: r}
	}
	return out
}

// leasedOrder drains f with one worker and returns the URLs in the order
// they were leased.
func leasedOrder(t *testing.T, f *Frontier) []string {
	t.Helper()
	return runWorkers(t, f, 1, time.Millisecond, func(Lease) Result { return Result{Fetched: true} }).order
}

// Within a host, the most important URL queued goes first; equals keep
// the order they came in (a crawl that ranks nothing is first in, first
// out); a higher priority goes before any rank.
func TestHostServesMostImportantFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{})
		items := rankedItems("a.test", 1, 5, 3, 5, 0)
		items = append(items, Item{URL: "http://a.test/seed", Host: "a.test", Priority: High})
		f.Add(items...)
		got := leasedOrder(t, f)
		want := []string{"http://a.test/seed", items[1].URL, items[3].URL, items[2].URL, items[0].URL, items[4].URL}
		if !slices.Equal(got, want) {
			t.Errorf("leased\n%v\nwant\n%v", got, want)
		}
	})
}

// With a Store, a host's head holds at most HeadSize URLs and the rest
// wait on disk. A URL more important than the head's least takes its
// place, and the least goes to the tail: the important URLs found late
// are not served after everything queued before them. Nothing is lost or
// leased twice, and the disk is empty at the end.
func TestHeadKeepsTheMostImportant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDiskStore()
		f := newFrontier(t, Config{Store: d, HeadSize: 3, FrontBuffer: 4, FirstSeq: 1})
		// Ten unranked URLs fill the head and the tail first.
		var all []Item
		for i := range 10 {
			all = append(all, Item{URL: fmt.Sprintf("http://a.test/plain%02d", i), Host: "a.test", Priority: Normal})
		}
		f.Add(d.push(all...)...)
		// Then three important ones, one at a time, as pages find them.
		important := rankedItems("a.test", 7, 9, 8)
		for _, it := range important {
			f.Add(d.push(it)...)
		}
		order, _ := drainStore(t, f, d, 1, time.Millisecond, nil)
		// The first lease may have gone before the important ones came;
		// they must all be served among the first four.
		pos := leasedOnce(t, order, 13)
		for _, it := range important {
			if pos[it.URL] > 3 {
				t.Errorf("%s (rank %d) leased %dth: %v", it.URL, it.Rank, pos[it.URL]+1, order)
			}
		}
		if pos[important[1].URL] > pos[important[2].URL] || pos[important[2].URL] > pos[important[0].URL] {
			t.Errorf("important URLs not in rank order: %v", order)
		}
		// The plain ones the important ones displaced went to the back of
		// the tail: among equals the order is not kept across a
		// displacement (a rank with a depth prior makes equals siblings).
		if d.spills == 0 {
			t.Error("nothing went to the tail; the test does not test the head's bound")
		}
		if n := d.size(); n != 0 {
			t.Errorf("%d entries left on disk", n)
		}
	})
}

// A host's URLs of Normal priority sent to its tail on disk, while Low
// ones sat in its head, are served before those Low ones all the same:
// once its head holds nothing better than Low, the Low URLs go to the end
// of the tail and the tail's next part comes in their place. Nothing is
// lost or leased twice, and the disk is empty at the end.
func TestLowWaitsForTheTail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDiskStore()
		f := newFrontier(t, Config{Store: d, HeadSize: 2, FrontBuffer: 4, FirstSeq: 1})
		low := []Item{{URL: "http://a.test/low0", Host: "a.test", Priority: Low}, {URL: "http://a.test/low1", Host: "a.test", Priority: Low}}
		f.Add(d.push(low...)...)
		var normal []Item
		for i := range 6 {
			normal = append(normal, Item{URL: fmt.Sprintf("http://a.test/n%d", i), Host: "a.test", Priority: Normal})
		}
		for _, it := range normal {
			f.Add(d.push(it)...) // one at a time, as pages find them
		}
		order, _ := drainStore(t, f, d, 1, time.Millisecond, nil)
		leasedOnce(t, order, 8)
		for i, u := range order {
			if low := strings.Contains(u, "low"); low != (i >= 6) {
				t.Errorf("leased %s %dth: %v; want the Low URLs last", u, i+1, order)
				break
			}
		}
		if order[6] != low[0].URL {
			t.Errorf("leased %v; want the Low URLs in the order they came", order)
		}
		if d.spills == 0 {
			t.Error("nothing went to the tail; the test does not test it")
		}
		if n := d.size(); n != 0 {
			t.Errorf("%d entries left on disk", n)
		}
	})
}

// A host whose tail holds a long run of Low URLs ahead of a Normal one
// (a sitemap's, and a link found since) does not rotate its head through
// the whole run: after rotateSpan reads that bring nothing better, it
// waits until the tail is read past where it was.
func TestRotationGivesUp(t *testing.T) {
	d := newDiskStore()
	f := newFrontier(t, Config{Store: d, HeadSize: 2, FrontBuffer: 4, FirstSeq: 1})
	h := f.activate("a.test")
	route := func(items ...Item) { routeFlushed(f, h, d.push(items...)...) }
	route(rankedItems("a.test", 9, 9)...) // the head
	for i := range 40 {
		route(Item{URL: fmt.Sprintf("http://a.test/low%02d", i), Host: "a.test", Priority: Low})
	}
	route(Item{URL: "http://a.test/late", Host: "a.test", Priority: Normal, Rank: 1})
	if h.better != 1 {
		t.Fatalf("better %d, want 1: the Normal URL did not go to the tail", h.better)
	}
	h.head.pop()
	h.head.pop()
	f.readTail(h) // the head is empty: two Low URLs
	reads := d.reads
	for range 10 {
		f.rotate(h)
	}
	if n := d.reads - reads; n != rotateSpan {
		t.Errorf("%d reads of the tail in 10 rotations, want %d", n, rotateSpan)
	}
	if h.head.len() != 2 || class(h.head.peek().Priority) != class(Low) {
		t.Errorf("the head holds %d URLs, the first %v; want 2, Low", h.head.len(), h.head.peek())
	}
	// Read in its order past where the rotations stopped, the tail brings
	// the Normal URL; the rotations look again.
	for h.head.len() > 0 {
		h.head.pop()
		f.inHeads--
		if h.head.len() == 0 && h.tailMore {
			f.readTail(h)
		}
		f.rotate(h)
		if h.head.len() > 0 && h.head.peek().URL == "http://a.test/late" {
			return
		}
	}
	t.Error("the Normal URL was never read back")
}

// leasedOnce fails t unless order holds n URLs, none twice, and returns
// each URL's place in it.
func leasedOnce(t *testing.T, order []string, n int) map[string]int {
	t.Helper()
	if len(order) != n {
		t.Fatalf("leased %d URLs, want %d: %v", len(order), n, order)
	}
	pos := map[string]int{}
	for i, u := range order {
		if _, dup := pos[u]; dup {
			t.Fatalf("%s leased twice: %v", u, order)
		}
		pos[u] = i
	}
	return pos
}

// A frontier that drains never leases a Surplus URL: it ends when only
// they are left, keeps them on disk and counts them. One that is kept
// alive takes them once nothing else is queued, after everything else.
func TestSurplusWaitsForEverythingElse(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keepalive=%v", keep), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := newDiskStore()
				f := newFrontier(t, Config{Store: d, HeadSize: 2, FrontBuffer: 2, FirstSeq: 1, KeepAlive: keep})
				var items []Item
				for i := range 4 {
					items = append(items, Item{URL: fmt.Sprintf("http://a.test/s%d", i), Host: "a.test", Priority: Surplus, Rank: 9})
					items = append(items, Item{URL: fmt.Sprintf("http://a.test/n%d", i), Host: "a.test", Priority: Low})
					items = append(items, Item{URL: fmt.Sprintf("http://b.test/n%d", i), Host: "b.test", Priority: Normal})
				}
				f.Add(d.push(items...)...)
				var stop func(int) bool
				if keep {
					stop = func(n int) bool { return n == len(items) }
				}
				order, _ := drainStore(t, f, d, 2, time.Millisecond, stop)
				var surplus []int
				for i, u := range order {
					if u[len("http://a.test/")] == 's' {
						surplus = append(surplus, i)
					}
				}
				if !keep {
					if len(order) != 8 || len(surplus) != 0 {
						t.Fatalf("leased %v, want the 8 others and no surplus", order)
					}
					if s := f.Stats(); s.Surplus != 4 || s.Queued != 0 {
						t.Errorf("stats after the drain: surplus %d, queued %d; want 4, 0", s.Surplus, s.Queued)
					}
					if n := d.size(); n != 4 {
						t.Errorf("%d entries on disk, want the 4 surplus URLs", n)
					}
					return
				}
				if len(order) != len(items) || len(surplus) != 4 || surplus[0] < 8 {
					t.Errorf("leased %v: want every URL, the surplus ones last", order)
				}
			})
		})
	}
}

// A host's queue allocates nothing per URL once its storage has grown:
// a crawl queues some ten URLs a page.
func TestBackQueueAllocatesNothing(t *testing.T) {
	var q backQueue
	items := rankedItems("a.test", 3, 1, 4, 1, 5, 9, 2, 6)
	fill := func() {
		for _, it := range items {
			q.push(it)
		}
		for q.len() > 0 {
			q.pop()
		}
	}
	fill()
	if n := testing.AllocsPerRun(100, fill); n != 0 {
		t.Errorf("%v allocations per fill and drain, want 0", n)
	}
}

// Ranks that rise and fall as URLs are found keep the memory bounds a
// Store gives: heads that make room for more important URLs send the
// least to their tails, and every URL is leased once, none lost.
func TestRankedHeadsKeepTheBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDiskStore()
		f := newFrontier(t, Config{Store: d, MaxActiveHosts: 3, FrontBuffer: 8, HeadSize: 2, FirstSeq: 1})
		const hosts, perHost = 6, 30
		n := 0
		for h := range hosts {
			// Each host's URLs in a row, as a page's links mostly are,
			// so that heads fill and make room.
			for i := range perHost {
				n++
				// Ranks rise with i, then fall, at random-looking steps.
				rank := uint32((i*7919 + h*104729) % 97)
				f.Add(d.push(Item{URL: fmt.Sprintf("http://h%d.test/%03d", h, i), Host: fmt.Sprintf("h%d.test", h), Priority: Normal, Rank: rank})...)
			}
		}
		order, peak := drainStore(t, f, d, 3, time.Millisecond, nil)
		if len(order) != n || len(slices.Compact(slices.Sorted(slices.Values(order)))) != n {
			t.Fatalf("leased %d URLs (%d distinct), want each of %d once", len(order), len(slices.Compact(slices.Sorted(slices.Values(order)))), n)
		}
		if bound := 3*8 + 3*(2+1); peak > bound {
			t.Errorf("memory held %d URLs, bound %d", peak, bound)
		}
		if d.spills == 0 {
			t.Error("nothing went to a tail; the test does not test the bound")
		}
		if left := d.size(); left != 0 {
			t.Errorf("%d entries left on disk", left)
		}
	})
}

// Hosts ready at the same time go in the order of their next URLs'
// priorities, Surplus after Low (a URL held past a trap budget after
// everything else), not in the order of the values.
func TestReadyTieGoesToTheHigherPriority(t *testing.T) {
	at := time.Now()
	var hs readyHeap
	for _, p := range []Priority{Surplus, Low, High, Normal} {
		h := &host{name: p.String(), key: at}
		h.head.push(Item{URL: "http://" + p.String() + ".test/", Priority: p})
		hs = append(hs, h)
	}
	sort.Sort(hs)
	var got []Priority
	for _, h := range hs {
		got = append(got, h.head.peek().Priority)
	}
	if want := []Priority{High, Normal, Low, Surplus}; !slices.Equal(got, want) {
		t.Errorf("hosts ready at once taken in the order %v, want %v", got, want)
	}
}

// After a restart, a tail written by the run before, whose Low URLs
// stand ahead of Normal ones, is looked through as the run's own: the
// Normal URLs are served first.
func TestRotationAfterARestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDiskStore()
		cfg := Config{Store: d, HeadSize: 2, FrontBuffer: 4, FirstSeq: 1}
		f := newFrontier(t, cfg)
		h := f.activate("a.test")
		for _, it := range d.push(append(rankedItems("a.test", 9, 9),
			Item{URL: "http://a.test/low0", Host: "a.test", Priority: Low}, Item{URL: "http://a.test/low1", Host: "a.test", Priority: Low},
			Item{URL: "http://a.test/n0", Host: "a.test", Priority: Normal, Rank: 1}, Item{URL: "http://a.test/n1", Host: "a.test", Priority: Normal, Rank: 1})...) {
			f.route(h, it)
		}
		f.flushSpill()
		d.done(h.head.pop()) // the head's two are leased and done,
		d.done(h.head.pop()) // and the run stops
		cfg.FirstSeq = d.seq + 1
		order, _ := drainStore(t, newFrontier(t, cfg), d, 1, time.Millisecond, nil)
		if pos := leasedOnce(t, order, 4); max(pos["http://a.test/n0"], pos["http://a.test/n1"]) > min(pos["http://a.test/low0"], pos["http://a.test/low1"]) {
			t.Errorf("leased %v; want the Normal ones of the tail before its Low ones", order)
		}
	})
}

// A rotation keeps in the head what has no place in the tail (a URL in
// memory only), and a tail read out holds nothing better, whatever was
// counted: the host does not rotate again for it.
func TestRotationKeepsAndForgets(t *testing.T) {
	d := newDiskStore()
	f := newFrontier(t, Config{Store: d, HeadSize: 2, FrontBuffer: 4, FirstSeq: 1})
	h := f.activate("a.test")
	route := func(items ...Item) { routeFlushed(f, h, items...) }
	route(d.push(rankedItems("a.test", 9, 9)...)...)
	route(d.push(Item{URL: "http://a.test/low0", Host: "a.test", Priority: Low})...)
	route(d.push(Item{URL: "http://a.test/n0", Host: "a.test", Priority: Normal, Rank: 1})...)
	h.head.pop()
	h.head.pop()
	f.inHeads -= 2
	route(Item{URL: "http://a.test/mem", Host: "a.test", Priority: Low}) // Seq 0: in memory only
	f.rotate(h)
	var got []string
	for h.head.len() > 0 {
		got = append(got, h.head.pop().URL)
		f.inHeads--
	}
	if !slices.Contains(got, "http://a.test/mem") || !slices.Contains(got, "http://a.test/n0") || f.inHeads != 0 {
		t.Errorf("after the rotation the head held %v (%d counted); want the URL in memory kept and n0 read", got, f.inHeads)
	}
	f.readTail(h) // low0, and the tail is read out
	if h.tailMore || h.better != 0 {
		t.Errorf("a tail read out: more %v, better %d; want none", h.tailMore, h.better)
	}
}

// routeFlushed routes items into h's queue, as Add does, and writes what
// went to its tail.
func routeFlushed(f *Frontier, h *host, items ...Item) {
	for _, it := range items {
		f.route(h, it)
	}
	f.flushSpill()
}
