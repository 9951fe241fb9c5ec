// Package queuebench is the workload of weft bench queue: it drives a
// crawl's durable queues (package state) without fetching.
package queuebench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/state"
)

// Bench drives the crawl's durable queues without fetching: the same
// seen set, batches, frontier and store as a crawl, with the network
// replaced by an instant "fetch". weft bench queue runs its two phases in
// separate processes, so that the second measures a restart.
type Bench struct {
	Dir        string // data directory (the state goes in Dir/state)
	URLs       int    // URLs to enqueue
	Hosts      int    // spread evenly over this many hosts
	Batch      int    // URLs per batch, as one page's links; zero means 100
	Workers    int    // concurrent producers or consumers; zero means 8
	Partitions int    // zero means 64
	// Pages makes Drain complete each lease as the crawl completes a page,
	// rewriting the URL's record with its outcome. Without it a completion
	// writes what the frontier needs: the queue entry's deletion and the
	// host's clock.
	Pages bool
	// Progress, if set, is called about once a second with the URLs done.
	Progress func(done int)
}

// Result is what one phase measured.
type Result struct {
	URLs       int           // URLs enqueued or drained
	Elapsed    time.Duration // from the first URL to the last
	FirstURL   time.Duration // drain: from the call to the first URL leased
	Duplicates int           // drain: URLs leased more than once (must be 0)
	InMemory   int           // drain: the most URLs the frontier held in memory
	Active     int           // drain: the most active hosts
}

func (q *Bench) defaults() {
	if q.Batch <= 0 {
		q.Batch = 100
	}
	if q.Workers <= 0 {
		q.Workers = 8
	}
	if q.Partitions <= 0 {
		q.Partitions = 64
	}
}

// benchURL is URL i: host i mod hosts, so every batch of consecutive URLs
// spreads over many hosts and every host gets the same share.
func benchURL(i, hosts int) (host, url string) {
	host = "h" + strconv.Itoa(i%hosts) + ".bench.test"
	return host, "http://" + host + "/p/" + strconv.Itoa(i/hosts)
}

// Enqueue admits URLs 0..URLs-1 into a fresh state through the seen set, in
// batches committed as a page's batch is, and returns the rate.
func (q Bench) Enqueue(ctx context.Context) (Result, error) {
	q.defaults()
	d, _, err := state.Open(q.Dir, q.Partitions, true, nil)
	if err != nil {
		return Result{}, err
	}
	defer d.Close()
	s, err := d.Seen(uint(q.URLs))
	if err != nil {
		return Result{}, err
	}
	f, err := d.Frontier(frontier.Config{KeepAlive: true})
	if err != nil {
		return Result{}, err
	}
	// The frontier runs, as in a crawl, so that Add is taken in; with no
	// consumer it only fills its bounded memory.
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	frontErr := make(chan error, 1)
	go func() { frontErr <- f.Run(fctx) }()

	var next, done atomic.Int64
	var firstErr error
	var errOnce sync.Once
	start := time.Now()
	stopProgress := q.progress(&done)
	var wg sync.WaitGroup
	for range q.Workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				from := int(next.Add(int64(q.Batch))) - q.Batch
				if from >= q.URLs {
					return
				}
				pb := d.NewBatch()
				for i := from; i < min(from+q.Batch, q.URLs); i++ {
					host, u := benchURL(i, q.Hosts)
					if _, err := pb.Admit(s, host, u); err != nil {
						errOnce.Do(func() { firstErr = err })
						return
					}
				}
				n := len(pb.Items)
				if err := pb.Commit(s, f); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				done.Add(int64(n))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress()
	stop()
	if err := <-frontErr; err != nil && !errors.Is(err, context.Canceled) {
		return Result{}, err
	}
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		return Result{}, firstErr
	}
	return Result{URLs: int(done.Load()), Elapsed: elapsed}, nil
}

// Drain reopens the state Enqueue left and leases every queued URL, each
// completed as a fetched page is (its queue entry deleted, its record and
// its host's clock written, in one batch), with no delay between requests.
// FirstURL is measured from the call, which for a fresh process is about
// its start.
func (q Bench) Drain(ctx context.Context) (Result, error) {
	q.defaults()
	called := time.Now()
	d, found, err := state.Open(q.Dir, q.Partitions, false, nil)
	if err != nil {
		return Result{}, err
	}
	defer d.Close()
	if !found {
		return Result{}, fmt.Errorf("queuebench: no queue benchmark state in %s; run the enqueue phase first", q.Dir)
	}
	f, err := d.Frontier(frontier.Config{MaxActiveHosts: max(1024, 4*q.Workers)})
	if err != nil {
		return Result{}, err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	frontErr := make(chan error, 1)
	go func() { frontErr <- f.Run(ctx) }()

	var (
		done      atomic.Int64
		first     atomic.Int64
		firstErr  error
		errOnce   sync.Once
		leased    = make([]atomic.Uint64, (q.URLs+63)/64) // a bit per URL number
		dups      atomic.Int64
		peakMem   atomic.Int64
		peakHosts atomic.Int64
	)
	stopProgress := q.progress(&done)
	var wg sync.WaitGroup
	for w := range q.Workers {
		wg.Go(func() {
			for n := 0; ; n++ {
				l, err := f.Next(ctx)
				if err != nil {
					if !errors.Is(err, frontier.ErrDrained) && !errors.Is(err, frontier.ErrStopped) && ctx.Err() == nil {
						errOnce.Do(func() { firstErr = err })
					}
					return
				}
				first.CompareAndSwap(0, int64(time.Since(called)))
				if i, ok := benchIndex(l.URL, q.Hosts); ok && i < q.URLs {
					if bit := uint64(1) << (i % 64); leased[i/64].Or(bit)&bit != 0 {
						dups.Add(1)
					}
				}
				pb := d.NewBatch()
				res := pb.Complete(f, l, frontier.Result{Fetched: true}, q.Pages)
				if err := pb.Commit(nil, f); err != nil {
					errOnce.Do(func() { firstErr = err })
					stop() // the others must not wait for this lease
					f.Complete(l, frontier.Result{Retry: true})
					return
				}
				f.Complete(l, res)
				done.Add(1)
				if w == 0 && n%1024 == 0 {
					st := f.Stats()
					peakMem.Store(max(peakMem.Load(), int64(st.InMemory)))
					peakHosts.Store(max(peakHosts.Load(), int64(st.ActiveHosts)))
				}
			}
		})
	}
	wg.Wait()
	stopProgress()
	ferr := <-frontErr
	if ferr != nil && !errors.Is(ferr, context.Canceled) {
		firstErr = errors.Join(ferr, firstErr) // the frontier's own error first
	}
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		return Result{}, firstErr
	}
	firstAt := time.Duration(first.Load())
	return Result{
		URLs: int(done.Load()), Elapsed: time.Since(called) - firstAt, FirstURL: firstAt,
		Duplicates: int(dups.Load()), InMemory: int(peakMem.Load()), Active: int(peakHosts.Load()),
	}, nil
}

// benchIndex inverts benchURL.
func benchIndex(u string, hosts int) (int, bool) {
	// http://h<host>.bench.test/p/<k>
	const prefix = "http://h"
	if len(u) < len(prefix) || u[:len(prefix)] != prefix {
		return 0, false
	}
	rest := u[len(prefix):]
	dot := 0
	for dot < len(rest) && rest[dot] != '.' {
		dot++
	}
	h, err := strconv.Atoi(rest[:dot])
	if err != nil {
		return 0, false
	}
	slash := len(rest) - 1
	for slash >= 0 && rest[slash] != '/' {
		slash--
	}
	k, err := strconv.Atoi(rest[slash+1:])
	if err != nil {
		return 0, false
	}
	return k*hosts + h, true
}

// progress calls q.Progress about once a second until the returned stop.
func (q Bench) progress(done *atomic.Int64) (stop func()) {
	if q.Progress == nil {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				q.Progress(int(done.Load()))
			}
		}
	})
	return func() { close(quit); wg.Wait() }
}

// Restart is what one restart measured: the time from the call to each
// step, the last being the first URL leased.
type Restart struct {
	Open     time.Duration // the store open (its log replayed) and the state's metadata read
	Frontier time.Duration // the frontier made
	FirstURL time.Duration // the first URL leased
}

// Restart reopens the state Enqueue left, as a restarted crawl would, and
// leases one URL; it completes nothing, so the state is as it found it
// (the lease, never completed, stays queued) and can be measured again.
func (q Bench) Restart(ctx context.Context) (Restart, error) {
	q.defaults()
	var r Restart
	called := time.Now()
	d, found, err := state.Open(q.Dir, q.Partitions, false, nil)
	if err != nil {
		return r, err
	}
	defer d.Close()
	if !found {
		return r, fmt.Errorf("queuebench: no queue benchmark state in %s; run the enqueue phase first", q.Dir)
	}
	r.Open = time.Since(called)
	f, err := d.Frontier(frontier.Config{MaxActiveHosts: max(1024, 4*q.Workers)})
	if err != nil {
		return r, err
	}
	r.Frontier = time.Since(called)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	frontErr := make(chan error, 1)
	go func() { frontErr <- f.Run(ctx) }()
	l, err := f.Next(ctx)
	if err == nil {
		r.FirstURL = time.Since(called)
		f.Complete(l, frontier.Result{Retry: true})
	}
	stop()
	if ferr := <-frontErr; ferr != nil && !errors.Is(ferr, context.Canceled) {
		err = errors.Join(ferr, err)
	}
	return r, err
}
