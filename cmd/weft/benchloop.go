package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// loopResult is what a bare GET loop did.
type loopResult struct {
	pages, failed, dials int
	wall, cpu            time.Duration
	bytes                int64
}

// bareLoop is the floor weft bench's crawl is held to (issue 37): every
// URL of urls asked for once with a plain GET, in their order, conns at a
// time, each body read and discarded, over connections kept alive (dials
// counts those opened); no robots.txt, no parsing, no archive, no
// politeness. Host names are dialled at the addresses resolve gives them.
// A URL that fails or does not answer 200 is counted in failed.
func bareLoop(ctx context.Context, urls []string, resolve map[string]string, conns int) (loopResult, error) {
	var d net.Dialer
	var dials atomic.Int64
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if ip, ok := resolve[host]; ok {
				addr = net.JoinHostPort(ip, port)
			}
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConnsPerHost: conns, // and no bound on the idle connections of all hosts
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       30 * time.Second,
	}
	var next, pages, failed, bytes atomic.Int64
	cpu0, start := cpuTime(), time.Now()
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(urls)) || ctx.Err() != nil {
					return
				}
				n, ok := getDiscard(ctx, client, urls[i])
				bytes.Add(n)
				if ok {
					pages.Add(1)
				} else {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	res := loopResult{pages: int(pages.Load()), failed: int(failed.Load()), dials: int(dials.Load()), wall: time.Since(start), cpu: cpuTime() - cpu0, bytes: bytes.Load()}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("bench: bare GET loop: %w", err)
	}
	if res.pages == 0 {
		return res, fmt.Errorf("bench: bare GET loop: none of %d URLs answered 200", len(urls))
	}
	return res, nil
}

// interleaveHosts orders urls host by host in turn (the first of each
// host, then the second, ...), so that a loop over them spreads its
// requests over every host at once, as a crawl does, rather than over one
// host at a time.
func interleaveHosts(urls []string) []string {
	var hosts []string
	byHost := map[string][]string{}
	for _, u := range urls {
		h := u
		if p, err := url.Parse(u); err == nil {
			h = p.Host
		}
		if _, ok := byHost[h]; !ok {
			hosts = append(hosts, h)
		}
		byHost[h] = append(byHost[h], u)
	}
	out := make([]string, 0, len(urls))
	for i := 0; len(out) < len(urls); i++ {
		for _, h := range hosts {
			if i < len(byHost[h]) {
				out = append(out, byHost[h][i])
			}
		}
	}
	return out
}

// getDiscard GETs url and reads its body away, returning the body's length
// and whether the answer was a whole 200.
func getDiscard(ctx context.Context, c *http.Client, url string) (int64, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, false
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return n, err == nil && resp.StatusCode == http.StatusOK
}
