package archive

import (
	"sync"

	"github.com/weft-crawler/weft/internal/store"
)

// pendingCaptures are the captures of batches not committed yet, by URL:
// the capture index has them only once their batch commits, and a
// browser may ask for one before (the render's own batch is its page's,
// which commits when the page's lease ends). It holds only what batches
// in flight hold, so it is bounded by the workers.
type pendingCaptures struct {
	mu sync.Mutex
	m  map[string]pendingCapture
}

type pendingCapture struct {
	rec store.CaptureRecord
	st  *Staging
}

func (p *pendingCaptures) put(rec store.CaptureRecord, st *Staging) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]pendingCapture{}
	}
	p.m[rec.URL] = pendingCapture{rec, st}
	st.captured = append(st.captured, rec.URL)
}

func (p *pendingCaptures) get(url string) (store.CaptureRecord, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.m[url]
	return c.rec, ok
}

// forget drops the captures of st, whose batch has committed (the index
// answers for them now) or failed (the crawl stops); a newer capture of
// the same URL in another batch stays.
func (p *pendingCaptures) forget(st *Staging) {
	if len(st.captured) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, url := range st.captured {
		if c, ok := p.m[url]; ok && c.st == st {
			delete(p.m, url)
		}
	}
}
