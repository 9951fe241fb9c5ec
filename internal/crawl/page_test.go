package crawl

import (
	"testing"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/seen"
)

// A worker keeps its page buffers from page to page, emptied, but lets go
// of those a huge page (a sitemap of 50,000 URLs) grew.
func TestPageBuffersKeptButNotHuge(t *testing.T) {
	bufs := &pageBuffers{votes: importance.NewVotes()}
	p := newPageRun(frontier.Lease{}, nil, bufs)
	p.found = append(p.found, make([]found, 100)...)
	bufs.votes.Add(seen.KeyOf("http://a.test/"), importance.SameHost)
	p.release()
	if cap(bufs.found) < 100 || len(bufs.found) != 0 || bufs.votes.Len() != 0 {
		t.Fatalf("an ordinary page's buffers: found len %d cap %d, votes %d; want kept and empty", len(bufs.found), cap(bufs.found), bufs.votes.Len())
	}
	p = newPageRun(frontier.Lease{}, nil, bufs)
	p.found = append(p.found, make([]found, maxKeptBuffer+1)...)
	for i := range maxKeptBuffer + 1 {
		bufs.votes.Add(seen.KeyOf("http://a.test/"+string(rune('a'+i%26))+string(rune(i))), importance.SameHost)
	}
	p.release()
	if bufs.found != nil || bufs.votes.Len() != 0 {
		t.Errorf("a huge page's buffers kept: found cap %d, votes %d", cap(bufs.found), bufs.votes.Len())
	}
	(&pageRun{}).release() // a run without a worker's buffers has none to give back
}
