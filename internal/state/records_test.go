package state

import (
	"errors"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/lifecycle"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

type boostAll float64

func (b boostAll) BoostURL(string, string) float64 { return float64(b) }

// TestRecordsAsTheOperatorReadsThem: a URL's record is listed under its
// host and read back whole at the position listed, its estimate carries
// the boost in force; a position with no record is ErrUnknownURL; and
// once the crawl has closed, nothing is read.
func TestRecordsAsTheOperatorReadsThem(t *testing.T) {
	d, _, err := Open(t.TempDir(), 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const host, url = "a.test", "http://a.test/x"
	b := d.DB.NewBatch()
	b.PutURL(uint16(partition.Of(host, d.Partitions())), host, seen.KeyOf(url), store.URLRecord{URL: url, Depth: 2, Status: store.URLDone, LastStatus: 200})
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	life := &lifecycle.State{}
	r := d.Records(canon.New(canon.Config{}), life, importance.New(1<<10, 100), boostAll(2))
	pos, recs, next, err := r.URLs(host, 0, nil, 10)
	if err != nil || len(pos) != 1 || recs[0].URL != url || next != nil {
		t.Fatalf("URLs of %s: %+v %+v next %v err %v; want %s alone", host, pos, recs, next, err, url)
	}
	p, err := r.Page(pos[0])
	if err != nil || p.Record.URL != url || p.Record.LastStatus != 200 {
		t.Fatalf("Page: %+v, %v", p, err)
	}
	if e := r.Estimate(pos[0], p.Record, time.Now()); e.Boost != 2 || e.Depth != importance.DepthPrior(2) {
		t.Errorf("estimate %+v, want the boost in force and the depth prior of 2", e)
	}
	missing := pos[0]
	missing.Hash = seen.KeyOf("http://a.test/none")
	if _, err := r.Page(missing); !errors.Is(err, ErrUnknownURL) {
		t.Errorf("Page of a URL without a record: %v", err)
	}
	life.Set(func(p *lifecycle.Phase) { p.Closed = true })
	if _, _, _, err := r.URLs(host, 0, nil, 10); !errors.Is(err, lifecycle.ErrNotRunning) {
		t.Errorf("URLs once closed: %v", err)
	}
	if _, err := r.Page(pos[0]); !errors.Is(err, lifecycle.ErrNotRunning) {
		t.Errorf("Page once closed: %v", err)
	}
}
