package api

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/history"
)

// History is the body of GET /v1/history: the crawl's samples, oldest
// first, at the fine interval for the last hour and at the coarse one for
// the last day, and the interval in progress.
type History struct {
	IntervalSeconds       float64          `json:"interval_seconds"`
	CoarseIntervalSeconds float64          `json:"coarse_interval_seconds"`
	Fine                  []history.Sample `json:"fine"`
	Coarse                []history.Sample `json:"coarse"`
	// Current is the interval from the last fine sample to now, nil
	// before the first point.
	Current *history.Sample `json:"current"`
}

// sampler takes a point of the crawl every interval into the ring, from
// the server's Start to its Close: the history is the process's, whenever
// a page opens.
type sampler struct {
	ring *history.Ring
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// pointOf reads the crawl's counters and gauges now.
func pointOf(c Crawl) history.Point {
	st := c.Stats()
	fd := c.Metrics().FetchDuration
	f := st.Frontier
	return history.Point{
		At: time.Now(), Pages: st.Pages, Bytes: st.Bytes, Errors: st.Errors, Status: st.ByStatus,
		Throttled: st.Throttled, Unavailable: st.Unavailable,
		Latency: history.Histogram{Bounds: fd.Bounds, Counts: fd.Counts, Count: fd.Count},
		Queued:  storedOr(f), InFlight: f.InFlight, ActiveHosts: f.ActiveHosts,
		Ready: f.ReadyHosts, Waiting: f.WaitingHosts, Parked: f.ParkedHosts, Held: f.HeldHosts,
	}
}

// storedOr is the queue depth: the store's count, or while it is not
// known the frontier's.
func storedOr(f FrontierStats) int {
	if f.Stored != nil {
		return int(*f.Stored)
	}
	return f.Queued
}

func (s *Server) startSampler() {
	ctx, stop := context.WithCancel(context.Background())
	s.sampler.stop = stop
	s.sampler.ring.Add(pointOf(s.res.Crawl))
	s.sampler.wg.Go(func() {
		t := time.NewTicker(s.sampler.ring.Fine())
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.sampler.ring.Add(pointOf(s.res.Crawl))
			}
		}
	})
}

func (s *Server) stopSampler() {
	if s.sampler.stop != nil {
		s.sampler.stop()
		s.sampler.wg.Wait()
	}
}

func (s *Server) history(w http.ResponseWriter, _ *http.Request) error {
	r := s.sampler.ring
	fine, coarse := r.Samples()
	out := History{IntervalSeconds: r.Fine().Seconds(), CoarseIntervalSeconds: r.CoarseInterval().Seconds(), Fine: fine, Coarse: coarse}
	if cur, ok := r.Current(pointOf(s.res.Crawl)); ok {
		out.Current = &cur
	}
	return writeJSON(w, http.StatusOK, out)
}
