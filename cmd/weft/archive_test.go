package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-crawler/weft/internal/cluster"
	"github.com/weft-crawler/weft/internal/natstest"
	"github.com/weft-crawler/weft/internal/objstore"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
)

// A crawl, then its capture index as CDXJ and its responses read back by
// URL: the terms page every host serves is stored once, and a host's copy
// that was written as a revisit still comes back with its body.
func TestCDXAndGet(t *testing.T) {
	web, err := synthweb.Start(synthweb.Config{Seed: 21, Hosts: 3, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsRules, synthweb.RobotsNotFound}})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	data := filepath.Join(t.TempDir(), "data")
	events := filepath.Join(t.TempDir(), "events.jsonl")
	args := []string{"crawl", "--data", data, "--delay", "2ms", "--workers", "4", "--allow-cidr", "127.0.0.0/8", "--scope", "any", "--events", events}
	for host, ip := range web.Resolve() {
		args = append(args, "--resolve", host+"="+ip)
	}
	if code, stdout, stderr := runWeft(t, append(args, web.Seeds()...)...); code != 0 || !strings.Contains(stdout, "dedup:") {
		t.Fatalf("crawl: exit %d\n%s\n%s", code, stdout, stderr)
	}

	code, stdout, stderr := runWeft(t, "cdx", "--data", data)
	if code != 0 {
		t.Fatalf("cdx: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	revisits := map[string]bool{}
	prev := ""
	for _, l := range lines {
		parts := strings.SplitN(l, " ", 3)
		if len(parts) != 3 || len(parts[1]) != 14 {
			t.Fatalf("CDXJ line %q", l)
		}
		var js struct{ URL, MIME, Status, Digest, Length, Offset, Filename string }
		if err := json.Unmarshal([]byte(parts[2]), &js); err != nil {
			t.Fatalf("CDXJ line %q: %v", l, err)
		}
		if !strings.HasPrefix(parts[0], "test,weft,h00") || js.URL == "" || !strings.HasPrefix(js.Digest, "sha1:") || js.Filename == "" {
			t.Errorf("CDXJ line %q", l)
		}
		if key := parts[0] + " " + parts[1]; key < prev {
			t.Errorf("CDXJ out of order: %q after %q", key, prev)
		} else {
			prev = key
		}
		if js.MIME == "warc/revisit" {
			revisits[js.URL] = true
		}
	}
	if !strings.Contains(stderr, "captures") || len(lines) < 30 {
		t.Errorf("%d CDXJ lines; stderr %q", len(lines), stderr)
	}
	// The events file has a line per capture, the same captures.
	evData, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	evLines := strings.Split(strings.TrimSuffix(string(evData), "\n"), "\n")
	evRevisits := 0
	for _, l := range evLines {
		var e struct {
			URL           string
			PayloadDigest string `json:"payload_digest"`
			WARCFile      string `json:"warc_file"`
			Offset        int64
			Length        int64
			Status        int
			Revisit       bool
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil || !strings.HasPrefix(e.PayloadDigest, "sha1:") || e.WARCFile == "" || e.Length == 0 || e.Status == 0 {
			t.Fatalf("event line %q: %+v, %v", l, e, err)
		}
		if e.Revisit {
			evRevisits++
		}
	}
	if len(evLines) != len(lines) || evRevisits != len(revisits) {
		t.Errorf("%d events (%d revisits) for %d captures (%d revisits)", len(evLines), evRevisits, len(lines), len(revisits))
	}
	// The reachable URLs of the terms page: one response, the rest revisits.
	reachable := 0
	for _, p := range web.AllPages() {
		if strings.Contains(p.URL, "/legal/terms") && p.Reachable && !p.Disallowed {
			reachable++
		}
	}
	terms := 0
	for u := range revisits {
		if strings.Contains(u, "/legal/terms") {
			terms++
		}
	}
	if terms != reachable-1 || reachable < 3 {
		t.Errorf("revisits %v; want all but one of the %d reachable terms pages", revisits, reachable)
	}

	for u := range revisits {
		code, stdout, stderr := runWeft(t, "get", "--data", data, u)
		if code != 0 {
			t.Fatalf("get %s: exit %d: %s", u, code, stderr)
		}
		head, body, ok := strings.Cut(stdout, "\r\n\r\n")
		if !ok || !strings.HasPrefix(head, "HTTP/1.1 200") || !bytes.Equal([]byte(body), web.Body(u)) || !strings.Contains(stderr, "a revisit of") {
			t.Errorf("get %s: %d body bytes (served %d); stderr %q", u, len(body), len(web.Body(u)), stderr)
		}
	}
	page := web.Seeds()[0]
	if code, stdout, _ := runWeft(t, "get", "--data", data, "--at", "20200101000000", page); code != 0 || !strings.HasSuffix(stdout, string(web.Body(page))) {
		t.Errorf("get %s --at: exit %d", page, code)
	}
	for _, bad := range [][]string{
		{"get", "--data", data, "http://nowhere.test/"},
		{"get", "--data", data, "--at", "yesterday", page},
		{"get", "--data", filepath.Join(t.TempDir(), "none"), page},
		{"cdx", "--data", filepath.Join(t.TempDir(), "none")},
	} {
		if code, _, stderr := runWeft(t, bad...); code == 0 || stderr == "" {
			t.Errorf("weft %v: exit %d, stderr %q", bad, code, stderr)
		}
	}
}

// With --s3-*, the crawl's finished WARC files go to the bucket and leave
// the disk, and weft get reads a page back from there; without the flags it
// says where the file went. The keys come from the environment.
func TestCrawlToObjectStore(t *testing.T) {
	web, err := synthweb.Start(synthweb.Config{Seed: 22, Hosts: 2, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	s3args, _ := fakeS3(t)

	data := filepath.Join(t.TempDir(), "data")
	args := append([]string{"crawl", "--data", data, "--delay", "2ms", "--workers", "4", "--allow-cidr", "127.0.0.0/8", "--warc-max-size", "65536"}, s3args...)
	for host, ip := range web.Resolve() {
		args = append(args, "--resolve", host+"="+ip)
	}
	code, stdout, stderr := runWeft(t, append(args, web.Seeds()...)...)
	if code != 0 || !strings.Contains(stdout, "WARC files uploaded") {
		t.Fatalf("crawl: exit %d\n%s\n%s", code, stdout, stderr)
	}
	entries, _ := os.ReadDir(filepath.Join(data, "warc"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".warc.gz") {
			t.Errorf("%s still on disk", e.Name())
		}
	}
	page := web.Seeds()[1]
	code, stdout, stderr = runWeft(t, append([]string{"get", "--data", data, page}, s3args...)...)
	if code != 0 || !strings.HasSuffix(stdout, string(web.Body(page))) {
		t.Errorf("get from the bucket: exit %d, %d bytes; stderr %s", code, len(stdout), stderr)
	}
	if code, _, stderr = runWeft(t, "get", "--data", data, page); code == 0 || !strings.Contains(stderr, "object store") {
		t.Errorf("get without --s3-*: exit %d, %s", code, stderr)
	}
	if code, _, stderr = runWeft(t, append(args[:len(args):len(args)], "--s3-bucket", "nope", "--fresh", web.Seeds()[0])...); code != 2 || !strings.Contains(stderr, "nope") {
		t.Errorf("a missing bucket: exit %d, %s", code, stderr)
	}
}

// --events-nats publishes one page event per capture to JetStream, on
// the stream and subjects the flags name.
func TestCrawlPublishesPageEvents(t *testing.T) {
	ns := startTestNATS(t)
	web, err := synthweb.Start(synthweb.Config{Seed: 24, Hosts: 2, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	data := filepath.Join(t.TempDir(), "data")
	events := filepath.Join(t.TempDir(), "events.jsonl")
	args := []string{"crawl", "--data", data, "--delay", "2ms", "--workers", "4", "--allow-cidr", "127.0.0.0/8", "--events", events,
		"--events-nats", ns.ClientURL(), "--events-stream", "PAGES", "--events-subject", "crawl.one"}
	for host, ip := range web.Resolve() {
		args = append(args, "--resolve", host+"="+ip)
	}
	if code, stdout, stderr := runWeft(t, append(args, web.Seeds()...)...); code != 0 {
		t.Fatalf("crawl: exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, _ := os.ReadFile(events)
	captures := bytes.Count(b, []byte("\n"))
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	st, err := js.Stream(t.Context(), "PAGES")
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if captures < 20 || info.State.Msgs != uint64(captures) || len(info.Config.Subjects) != 1 || info.Config.Subjects[0] != "crawl.one.>" {
		t.Errorf("stream: %d messages on %v, %d captures", info.State.Msgs, info.Config.Subjects, captures)
	}
}

// Two weft crawl --cluster nodes crawl one web through one JetStream
// server: every page is fetched once, politely, and each node, stopped,
// hands its partitions over and prints its summary. The crawl nodes keep
// their snapshots in S3 (--s3-*), the serve nodes in JetStream's object
// store: each snapshot recorded is there, whole. So do two weft serve
// --cluster nodes (their recrawls are not due before the test ends).
func TestClusterNodes(t *testing.T) {
	for _, command := range []string{"crawl", "serve"} {
		t.Run(command, func(t *testing.T) { testClusterNodes(t, command) })
	}
}

func testClusterNodes(t *testing.T, command string) {
	ns := startTestNATS(t)
	web, err := synthweb.Start(synthweb.Config{Seed: 29, Hosts: 6, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound, synthweb.RobotsRules}})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type result struct {
		code           int
		stdout, stderr string
	}
	for _, bad := range [][]string{{"--snapshot-every", "200ms"}, {"--snapshot-every", "-1s"}, {"--snapshot-after", "0"}} {
		args := append([]string{command, "--data", t.TempDir(), "--cluster", ns.ClientURL(), "--node", "x"}, bad...)
		if code, _, stderr := runWeft(t, append(args, web.Seeds()[0])...); code != 2 || !strings.Contains(stderr, bad[0]) {
			t.Errorf("weft %v: exit %d, %s", bad, code, stderr)
		}
	}
	results := make(chan result, 2)
	var s3args []string
	wantStore := "JetStream object store WEFT_SNAPSHOTS"
	var objects *objstore.Store
	if command == "crawl" {
		s3args, objects = fakeS3(t)
		wantStore = objects.String()
	}
	for _, name := range []string{"a", "b"} {
		args := []string{command, "--data", filepath.Join(t.TempDir(), "data"), "--delay", "20ms", "--workers", "4", "--allow-cidr", "127.0.0.0/8",
			"--cluster", ns.ClientURL(), "--node", name, "--progress", "never", "--snapshot-every", "1s", "--snapshot-after", "10"}
		args = append(args, s3args...)
		for host, ip := range web.Resolve() {
			args = append(args, "--resolve", host+"="+ip)
		}
		args = append(args, web.Seeds()...)
		go func() {
			var out, errb bytes.Buffer
			code := run(ctx, args, &out, &errb)
			results <- result{code, out.String(), errb.String()}
		}()
	}
	want := 0
	for _, p := range web.AllPages() {
		if p.Reachable && !p.Disallowed && p.Role != "image" {
			want++
		}
	}
	testwait.EventuallyNil(t, 2*time.Minute, "every page fetched", func() error {
		got := 0
		seen := map[string]int{}
		auth := map[string]string{}
		for _, h := range web.Hosts() {
			auth[h.Addr] = h.Authority
		}
		for _, r := range web.Log() {
			seen["http://"+auth[r.Addr]+r.Path]++
		}
		for _, p := range web.AllPages() {
			if p.Reachable && !p.Disallowed && p.Role != "image" && seen[p.URL] > 0 {
				got++
			}
		}
		if got != want {
			return fmt.Errorf("%d of %d pages fetched", got, want)
		}
		return nil
	})
	cancel()
	for range 2 {
		r := <-results
		if r.code != 0 || !strings.Contains(r.stdout, "crawl ") || !strings.Contains(r.stderr, "weft: node ") {
			t.Errorf("a node: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
	}
	if err := web.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
	audit := synthweb.Audit(web, 20*time.Millisecond)
	for _, s := range audit.Breaches() {
		t.Errorf("politeness: %s", s)
	}
	auth := map[string]string{}
	for _, h := range web.Hosts() {
		auth[h.Addr] = h.Authority
	}
	counts := map[string]int{}
	for _, r := range web.Log() {
		if !strings.HasPrefix(r.Path, "/robots") {
			counts["http://"+auth[r.Addr]+r.Path]++
		}
	}
	for u, n := range counts {
		if n > 1 {
			t.Errorf("%s fetched %d times", u, n)
		}
	}

	// The partitions' snapshots, each where its record says, whole.
	_, js := natstest.Connect(t, ns.ClientURL())
	kv, keys := snapshotRecords(t, js)
	if len(keys) == 0 {
		t.Fatal("no snapshot recorded")
	}
	obs, _ := js.ObjectStore(t.Context(), cluster.ObjectsBucket)
	for _, k := range keys {
		e, err := kv.Get(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		var ptr struct {
			Store, Object, SHA256 string
			Size                  int64
		}
		if err := json.Unmarshal(e.Value(), &ptr); err != nil {
			t.Fatal(err)
		}
		if ptr.Store != wantStore {
			t.Errorf("%s: snapshot in %q, want %q", k, ptr.Store, wantStore)
			continue
		}
		var r io.ReadCloser
		if objects != nil {
			r, err = objects.Get(t.Context(), ptr.Object)
		} else {
			r, err = obs.Get(t.Context(), ptr.Object)
		}
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		h := sha256.New()
		n, err := io.Copy(h, r)
		r.Close()
		if err != nil || n != ptr.Size || hex.EncodeToString(h.Sum(nil)) != ptr.SHA256 {
			t.Errorf("%s: %s holds %d bytes (%v), recorded %d of SHA-256 %s", k, ptr.Object, n, err, ptr.Size, ptr.SHA256)
		}
	}
	t.Logf("%d partitions snapshotted in the %s", len(keys), wantStore)
}

// fakeS3 serves an in-memory S3 on loopback with the bucket "warc", sets
// the keys weft reads from the environment, and returns the --s3-* flags
// that name it (prefix "c/") and a store on it.
func fakeS3(t *testing.T) ([]string, *objstore.Store) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("warc"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	t.Setenv("WEFT_S3_ACCESS_KEY", "a")
	t.Setenv("WEFT_S3_SECRET_KEY", "s")
	store, err := objstore.New(objstore.Config{Endpoint: srv.URL, Bucket: "warc", Prefix: "c/", AccessKey: "a", SecretKey: "s", Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	return []string{"--s3-endpoint", srv.URL, "--s3-bucket", "warc", "--s3-prefix", "c/", "--s3-region", "us-east-1"}, store
}

// snapshotRecords returns the crawl's bucket of snapshot records and
// its keys, one per partition snapshotted.
func snapshotRecords(t *testing.T, js jetstream.JetStream) (jetstream.KeyValue, []string) {
	t.Helper()
	kv, err := js.KeyValue(t.Context(), cluster.SnapsBucket)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.Keys(t.Context())
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		t.Fatal(err)
	}
	return kv, keys
}

// startTestNATS runs a JetStream server on a free loopback port.
func startTestNATS(t *testing.T) *natsserver.Server { return natstest.Start(t) }
