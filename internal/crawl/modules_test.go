package crawl

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/synthweb"
)

// TestImageModule crawls with --with-images: the image every article shows
// is fetched once (where robots.txt allows it), through the same
// politeness (the server's log shows no overlap or short gap), archived as
// a WARC response with its image type, read by the image handler and
// never parsed; without the module no image is requested.
func TestImageModule(t *testing.T) {
	for _, with := range []bool{false, true} {
		web := startWeb(t, synthweb.Config{Seed: 11, Hosts: 8, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
			RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsRules, synthweb.RobotsNotFound, synthweb.RobotsAgentGroup}})
		const delay = 20 * time.Millisecond
		cfg := testConfig(t, web, 8, delay)
		cfg.WithImages = with
		sum := runCrawl(t, cfg)

		fetched := map[string]bool{}
		for _, r := range readFetchLog(t, cfg.DataDir) {
			fetched[r.URL] = true
		}
		want := map[string]bool{} // images shown by an article that was fetched
		for _, p := range web.AllPages() {
			if p.Role == "article" && fetched[p.URL] {
				for _, img := range p.Embeds {
					if q, _ := web.Page(img); !q.Disallowed {
						want[img] = true
					}
				}
			}
		}
		requests := pageRequests(web)
		images := 0
		for _, p := range web.AllPages() {
			if p.Role != "image" {
				continue
			}
			n := requests[p.URL]
			images += n
			switch {
			case !with && n != 0:
				t.Errorf("without the module: %s requested %d times", p.URL, n)
			case with && want[p.URL] && n != 1:
				t.Errorf("with the module: %s requested %d times, want once", p.URL, n)
			case with && !want[p.URL] && n != 0:
				t.Errorf("with the module: %s requested %d times, shown by no fetched page or disallowed", p.URL, n)
			}
		}
		if with && len(want) < 4 {
			t.Fatalf("only %d images to fetch: the test proves little", len(want))
		}
		// The hosts' images are byte for byte the same: the first is read,
		// the others are revisits of it.
		if (with && sum.Handled["image"] != 1) || (!with && sum.Handled["image"] != 0) || sum.Handled["html"] == 0 {
			t.Errorf("read by handler: %v; want one image read", sum.Handled)
		}
		audit := synthweb.Audit(web, delay)
		for _, s := range audit.Breaches() {
			t.Errorf("politeness: %s", s)
		}
		if !with {
			continue
		}
		// Each image is a record: one response of type image/jpeg, and
		// revisits of it.
		jpegs, records := 0, 0
		for _, name := range sum.WARCFiles {
			for _, r := range readWARC(t, filepath.Join(cfg.DataDir, "warc", name)) {
				uri := r.header.Get("WARC-Target-URI")
				switch typ := r.header.Get("WARC-Type"); {
				case !want[uri]:
				case typ == "response":
					if !bytes.Contains(r.block, []byte("\r\nContent-Type: image/jpeg\r\n")) {
						t.Errorf("%s not archived as image/jpeg", uri)
					}
					jpegs++
					records++
				case typ == "revisit":
					records++
				}
			}
		}
		if jpegs != 1 || records != len(want) {
			t.Errorf("%d image responses and %d records in all in the WARC files, want 1 and %d", jpegs, records, len(want))
		}
	}
}
