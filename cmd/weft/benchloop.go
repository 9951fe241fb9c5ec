package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// loopResult is what a bare GET loop did.
type loopResult struct {
	pages, failed int
	wall, cpu     time.Duration
	bytes         int64
}

// bareLoop is the floor weft bench's crawl is held to (issue 37): every
// URL of urls asked for once with a plain GET, conns at a time over as many
// kept-alive connections, each body read and discarded; no robots.txt, no
// parsing, no archive, no politeness. Host names are dialled at the
// addresses resolve gives them. A URL that fails or does not answer 200 is
// counted in failed.
func bareLoop(ctx context.Context, urls []string, resolve map[string]string, conns int) (loopResult, error) {
	var d net.Dialer
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if ip, ok := resolve[host]; ok {
				addr = net.JoinHostPort(ip, port)
			}
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
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
	res := loopResult{pages: int(pages.Load()), failed: int(failed.Load()), wall: time.Since(start), cpu: cpuTime() - cpu0, bytes: bytes.Load()}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if res.pages == 0 {
		return res, fmt.Errorf("bare GET loop: none of %d URLs answered 200", len(urls))
	}
	return res, nil
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
