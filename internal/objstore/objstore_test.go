package objstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeS3 serves an in-memory S3 on loopback with one bucket, "warc";
// corrupt, when set, flips a byte of every upload body on its way in,
// as a bad network or disk would.
type fakeS3 struct {
	srv     *httptest.Server
	corrupt atomic.Bool
	puts    atomic.Int64
}

func newFakeS3(t *testing.T) *fakeS3 {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("warc"); err != nil {
		t.Fatal(err)
	}
	faker := gofakes3.New(backend).Server()
	f := &fakeS3{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			f.puts.Add(1)
			if f.corrupt.Load() && r.ContentLength > 0 {
				b, _ := io.ReadAll(r.Body)
				b[len(b)/2] ^= 0xff
				r.Body = io.NopCloser(bytes.NewReader(b))
			}
		}
		faker.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeS3) store(t *testing.T, prefix string) *Store {
	t.Helper()
	s, err := New(Config{Endpoint: f.srv.URL, Bucket: "warc", Prefix: prefix, AccessKey: "a", SecretKey: "s", Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func writeFile(t *testing.T, size int) (string, []byte) {
	t.Helper()
	b := make([]byte, size)
	rand.Read(b)
	p := filepath.Join(t.TempDir(), "weft-20261130-00001-abc.warc.gz")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, b
}

// TestUploadAndRange uploads a small file and one large enough to go in
// parts, and reads byte ranges of each back.
func TestUploadAndRange(t *testing.T) {
	f := newFakeS3(t)
	s := f.store(t, "crawls/a/")
	ctx := context.Background()
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{100 << 10, 20 << 20} {
		path, want := writeFile(t, size)
		key, err := s.Upload(ctx, path)
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		if key != "crawls/a/weft-20261130-00001-abc.warc.gz" {
			t.Errorf("key %q", key)
		}
		for _, rg := range [][2]int64{{0, 10}, {12345, 1000}, {int64(size) - 7, 7}, {int64(size) / 2, 0}} {
			r, err := s.Open(ctx, key, rg[0], rg[1])
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			end := int64(size)
			if rg[1] > 0 {
				end = rg[0] + rg[1]
			}
			if err != nil || !bytes.Equal(got, want[rg[0]:end]) {
				t.Errorf("%d bytes, range %v: %d bytes back, err %v", size, rg, len(got), err)
			}
		}
	}
}

// TestUploadCorruptedIsRefused: a part whose bytes change on the way is
// refused by the server's MD5 check, and the upload fails.
func TestUploadCorruptedIsRefused(t *testing.T) {
	f := newFakeS3(t)
	s := f.store(t, "")
	f.corrupt.Store(true)
	path, _ := writeFile(t, 64<<10)
	_, err := s.Upload(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "BadDigest") && !strings.Contains(strings.ToLower(err.Error()), "md5") {
		t.Fatalf("upload through a corrupting link: %v, want the digest refused", err)
	}
	if f.puts.Load() == 0 {
		t.Fatal("nothing was sent")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{Bucket: "b"},
		{Endpoint: "ftp://h", Bucket: "b"},
		{Endpoint: "http://h/path", Bucket: "b"},
		{Endpoint: "http://h:9000"},
		{Endpoint: "http://h:9000", Bucket: "b", AccessKey: "a"},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v): no error", c)
		}
	}
	f := newFakeS3(t)
	s, err := New(Config{Endpoint: f.srv.URL, Bucket: "missing", AccessKey: "a", SecretKey: "s", Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Check of a missing bucket: %v", err)
	}
}

// TestPutGetDelete: an object stored by name under the prefix reads back
// whole, is gone once deleted, and deleting it again is no error; a body
// changed on the way is refused.
func TestPutGetDelete(t *testing.T) {
	f := newFakeS3(t)
	s := f.store(t, "crawl/")
	ctx := context.Background()
	want := make([]byte, 300<<10)
	rand.Read(want)
	if err := s.Put(ctx, "snapshots/p3/a-1-2.wsnap", bytes.NewReader(want), int64(len(want))); err != nil {
		t.Fatal(err)
	}
	r, err := s.Open(ctx, "crawl/snapshots/p3/a-1-2.wsnap", 0, 0) // the key is the prefix and the name
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes of %d: %v", len(got), len(want), err)
	}
	if r, err = s.Get(ctx, "snapshots/p3/a-1-2.wsnap"); err == nil {
		got, err = io.ReadAll(r)
		r.Close()
	}
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Get: %d bytes of %d: %v", len(got), len(want), err)
	}
	for range 2 {
		if err := s.Delete(ctx, "snapshots/p3/a-1-2.wsnap"); err != nil {
			t.Fatal(err)
		}
	}
	if r, err = s.Get(ctx, "snapshots/p3/a-1-2.wsnap"); err == nil {
		_, err = io.ReadAll(r)
		r.Close()
	}
	if err == nil {
		t.Error("a deleted object reads back")
	}
	f.corrupt.Store(true)
	if err := s.Put(ctx, "x", bytes.NewReader(want), int64(len(want))); err == nil {
		t.Error("a body changed on the way was stored")
	}
	if got := s.String(); got != `S3 bucket warc under prefix "crawl/"` {
		t.Errorf("String: %s", got)
	}
}
