package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// fakeClock is a settable clock for the DNS cache.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestCache(r Resolver) (*dnsCache, *fakeClock) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return newDNSCache(r, dnsTTLs{fallback: time.Minute, min: 5 * time.Second, max: time.Hour, negative: 10 * time.Second}, slack, clk.now), clk
}

var addrA = netip.MustParseAddr("127.0.0.10")

func TestDNSCachePositiveTTL(t *testing.T) {
	r := &fakeResolver{answers: map[string][]netip.Addr{"a.test": {addrA}}}
	c, clk := newTestCache(r)
	ctx := context.Background()
	for range 3 {
		addrs, err := c.lookup(ctx, "a.test")
		if err != nil || len(addrs) != 1 || addrs[0] != addrA {
			t.Fatalf("lookup = %v, %v", addrs, err)
		}
	}
	if n := r.count("a.test"); n != 1 {
		t.Errorf("3 lookups within TTL made %d queries, want 1", n)
	}
	clk.advance(59 * time.Second)
	c.lookup(ctx, "a.test")
	if n := r.count("a.test"); n != 1 {
		t.Errorf("lookup just before expiry made a query")
	}
	clk.advance(time.Second)
	c.lookup(ctx, "a.test")
	if n := r.count("a.test"); n != 2 {
		t.Errorf("lookup after expiry: %d queries, want 2", n)
	}
	if h, m := c.hits.Load(), c.misses.Load(); h != 3 || m != 2 {
		t.Errorf("cache hits %d, misses %d; want 3 and 2", h, m)
	}
}

func TestDNSCacheNegativeTTL(t *testing.T) {
	r := &fakeResolver{errs: map[string]error{"fail.test": errTest}}
	c, clk := newTestCache(r)
	ctx := context.Background()
	for _, name := range []string{"missing.test", "fail.test"} {
		for range 2 {
			_, err := c.lookup(ctx, name)
			if err == nil {
				t.Fatalf("%s: no error", name)
			}
		}
		if n := r.count(name); n != 1 {
			t.Errorf("%s: 2 failed lookups made %d queries, want 1", name, n)
		}
	}
	_, err := c.lookup(ctx, "missing.test")
	var de *net.DNSError
	if !errors.As(err, &de) || !de.IsNotFound {
		t.Errorf("err = %v, want a not-found *net.DNSError", err)
	}
	clk.advance(10 * time.Second)
	c.lookup(ctx, "missing.test")
	if n := r.count("missing.test"); n != 2 {
		t.Errorf("after the negative TTL: %d queries, want 2", n)
	}
}

func TestDNSCacheEmptyAnswer(t *testing.T) {
	r := &fakeResolver{answers: map[string][]netip.Addr{"empty.test": {}}}
	c, _ := newTestCache(r)
	if _, err := c.lookup(context.Background(), "empty.test"); err == nil {
		t.Error("empty answer gave no error")
	}
}

func TestDNSCacheCoalesces(t *testing.T) {
	// In a synctest bubble, so that all ten lookups are surely waiting on
	// the one query before it answers (with real goroutines, a late one
	// could miss the cache before the answer is stored and ask again).
	synctest.Test(t, func(t *testing.T) {
		r := &fakeResolver{
			answers: map[string][]netip.Addr{"slow.test": {addrA}},
			gate:    make(chan struct{}),
			started: make(chan string, 100),
		}
		c, _ := newTestCache(r)
		var wg sync.WaitGroup
		errs := make(chan error, 10)
		for range 10 {
			wg.Go(func() {
				_, err := c.lookup(context.Background(), "slow.test")
				errs <- err
			})
		}
		synctest.Wait()
		close(r.gate)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		if n := r.count("slow.test"); n != 1 {
			t.Errorf("10 concurrent lookups made %d queries, want 1", n)
		}
	})
}

// A waiter that gives up does not cancel the query the others share.
func TestDNSCacheWaiterCancel(t *testing.T) {
	r := &fakeResolver{
		answers: map[string][]netip.Addr{"slow.test": {addrA}},
		gate:    make(chan struct{}),
		started: make(chan string, 100),
	}
	c, _ := newTestCache(r)
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := c.lookup(ctx, "slow.test")
		first <- err
	}()
	<-r.started
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("canceled waiter: err = %v", err)
	}
	second := make(chan error, 1)
	go func() {
		_, err := c.lookup(context.Background(), "slow.test")
		second <- err
	}()
	close(r.gate)
	if err := <-second; err != nil {
		t.Errorf("second waiter: %v", err)
	}
	if n := r.count("slow.test"); n != 1 {
		t.Errorf("%d queries, want 1", n)
	}
}

func TestDNSCacheBounded(t *testing.T) {
	r := &fakeResolver{}
	c, _ := newTestCache(r)
	c.max = 8
	for i := range 50 {
		c.lookup(context.Background(), fmt.Sprintf("n%d.test", i))
		if len(c.entries) > c.max {
			t.Fatalf("%d entries, max %d", len(c.entries), c.max)
		}
	}
}

// Through Get: the Resolve map wins over the resolver, IP literals never
// reach it, and a name is looked up once per TTL even across connections.
func TestDNSThroughGet(t *testing.T) {
	srv := newRawServer(t, "tcp", "127.0.0.1:0", okServer)
	_, port, _ := net.SplitHostPort(srv.addr())
	r := &fakeResolver{answers: map[string][]netip.Addr{
		"a.test":      {netip.MustParseAddr("127.0.0.1")},
		"pinned.test": {netip.MustParseAddr("127.0.0.99")}, // must not be used
	}}
	cfg := testConfig()
	cfg.Resolver = r
	cfg.Resolve = map[string]string{"Pinned.Test": "127.0.0.1"}
	f := newFetcher(t, cfg)

	for range 3 {
		get(t, f, "http://a.test:"+port+"/") // okServer closes: each Get dials anew
	}
	if n := r.count("a.test"); n != 1 {
		t.Errorf("3 dials made %d lookups, want 1", n)
	}
	get(t, f, "http://pinned.test:"+port+"/")
	get(t, f, "http://"+srv.addr()+"/")
	if n := r.count("pinned.test"); n != 0 {
		t.Errorf("Resolve-mapped name was looked up %d times", n)
	}
	if n := r.count("127.0.0.1"); n != 0 {
		t.Errorf("IP literal was looked up")
	}
	for range 2 {
		_, err := f.Get(context.Background(), "http://nx.test:"+port+"/", nil)
		wantKind(t, err, KindDNS)
	}
	if n := r.count("nx.test"); n != 1 {
		t.Errorf("2 failing Gets made %d lookups, want 1 (negative cache)", n)
	}
}

func TestDNSTinyTTLThroughGet(t *testing.T) {
	srv := newRawServer(t, "tcp", "127.0.0.1:0", okServer)
	_, port, _ := net.SplitHostPort(srv.addr())
	r := &fakeResolver{answers: map[string][]netip.Addr{"a.test": {netip.MustParseAddr("127.0.0.1")}}}
	cfg := testConfig()
	cfg.Resolver = r
	cfg.DNSCacheTTL = time.Nanosecond
	f := newFetcher(t, cfg)
	get(t, f, "http://a.test:"+port+"/")
	time.Sleep(time.Millisecond) // the 1 ns TTL passes: the subject, not a wait
	get(t, f, "http://a.test:"+port+"/")
	if n := r.count("a.test"); n != 2 {
		t.Errorf("%d lookups, want 2 with an expired entry", n)
	}
}
