package crawl

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/objstore"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// newTestObjects starts an in-memory S3 server on loopback with a bucket.
func newTestObjects(t *testing.T) *objstore.Store {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("warc"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	s, err := objstore.New(objstore.Config{Endpoint: srv.URL, Bucket: "warc", Prefix: "crawl/", AccessKey: "a", SecretKey: "s", Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func localWARCs(t *testing.T, dataDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dataDir, "warc"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".warc.gz") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestWARCFilesGoToObjectStore crawls with small WARC files and an object
// store: every finished file is uploaded and removed from disk, and every
// capture (revisits too) is read back from the bucket by byte range, with
// the payload the server sent. A file a run left on disk (a crawl run
// without the store) is uploaded by the next start.
func TestWARCFilesGoToObjectStore(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 23, Hosts: 3, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	objs := newTestObjects(t)
	cfg := testConfig(t, web, 4, 2*time.Millisecond)
	cfg.WARCMaxFileSize = 64 << 10 // many files
	cfg.Objects = objs
	sum := runCrawl(t, cfg)

	u := sum.WARCUploads
	if u == nil || u.Files < 3 || u.Files != int64(len(sum.WARCFiles)) || u.Failed != 0 {
		t.Fatalf("uploads %+v of %d files %v; on disk %v", u, len(sum.WARCFiles), sum.WARCFiles, localWARCs(t, cfg.DataDir))
	}
	if left := localWARCs(t, cfg.DataDir); len(left) != 0 {
		t.Errorf("finished WARC files still on disk: %v", left)
	}
	var out bytes.Buffer
	sum.Write(&out)
	if !strings.Contains(out.String(), "WARC files uploaded") {
		t.Errorf("the summary does not say so:\n%s", out.String())
	}

	a, err := archive.Open(cfg.DataDir, cfg.Canon)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var urls []string
	revisits := 0
	if err := a.Captures(func(r store.CaptureRecord) bool {
		if r.Status == 200 {
			urls = append(urls, r.URL)
			if r.Kind == store.CaptureRevisit {
				revisits++
			}
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(urls) < 20 || revisits == 0 {
		t.Fatalf("%d captures of 200s, %d revisits: too few to judge", len(urls), revisits)
	}
	if _, err := a.Get(urls[0], time.Time{}); err == nil || !strings.Contains(err.Error(), "object store") {
		t.Errorf("a lookup without the object store: %v, want it to say where the file went", err)
	}
	a.UseObjects(objs)
	for _, url := range urls {
		l, err := a.Get(url, time.Time{})
		if err != nil {
			t.Errorf("%s: %v", url, err)
			continue
		}
		if !bytes.Equal(l.Record.Payload, web.Body(url)) {
			t.Errorf("%s: %d payload bytes from the bucket, the server sent %d", url, len(l.Record.Payload), len(web.Body(url)))
		}
	}
	a.Close()

	// A run without the store leaves its file on disk; the next run with
	// it uploads that file at start.
	cfg.Objects = nil
	cfg.Seeds = append(cfg.Seeds, strings.TrimSuffix(cfg.Seeds[0], "/")+"/?again")
	second := runCrawl(t, cfg)
	if second.WARCUploads != nil || len(localWARCs(t, cfg.DataDir)) == 0 {
		t.Fatalf("a run without the object store: uploads %+v, files %v", second.WARCUploads, localWARCs(t, cfg.DataDir))
	}
	cfg.Objects = objs
	third := runCrawl(t, cfg)
	if third.WARCUploads == nil || third.WARCUploads.Files < 1 || len(localWARCs(t, cfg.DataDir)) != 0 {
		t.Errorf("the next start: uploads %+v, files left %v", third.WARCUploads, localWARCs(t, cfg.DataDir))
	}
}

// flakyObjects fails the first failFirst uploads, as a store in an outage.
type flakyObjects struct {
	archive.ObjectStore
	failFirst int64
	calls     atomic.Int64
}

func (f *flakyObjects) Upload(ctx context.Context, path string) (string, error) {
	if f.calls.Add(1) <= f.failFirst {
		return "", errors.New("store unavailable")
	}
	return f.ObjectStore.Upload(ctx, path)
}

// TestUploadRetriedLater: a file whose upload fails every attempt of a
// run is queued again a while later, and goes then, within the same crawl.
func TestUploadRetriedLater(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 25, Hosts: 3, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	cfg := testConfig(t, web, 2, 5*time.Millisecond)
	cfg.WARCMaxFileSize = 64 << 10
	cfg.uploadWait, cfg.uploadLater = time.Millisecond, 10*time.Millisecond
	cfg.Objects = &flakyObjects{ObjectStore: newTestObjects(t), failFirst: archive.UploadAttempts}
	sum := runCrawl(t, cfg)
	u := sum.WARCUploads
	if u == nil || u.Failed != 1 || u.Files != int64(len(sum.WARCFiles)) || len(localWARCs(t, cfg.DataDir)) != 0 {
		t.Errorf("uploads %+v of %d files; on disk %v", u, len(sum.WARCFiles), localWARCs(t, cfg.DataDir))
	}
}
