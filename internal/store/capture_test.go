package store

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDigestRoundTrip(t *testing.T) {
	db := openMem(t)
	sum := sha1.Sum([]byte("payload"))
	if _, ok, err := db.GetDigest(sum); ok || err != nil {
		t.Fatalf("GetDigest before Put: %v, %v", ok, err)
	}
	want := DigestRecord{URL: "http://a.test/x", Date: t0, File: "weft-1.warc.gz", Offset: 1234, Length: 567, Followed: true, Depth: 3, RecordID: "<urn:uuid:1>"}
	b := db.NewBatch()
	b.PutDigest(sum, want)
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	got, ok, err := db.GetDigest(sum)
	if err != nil || !ok || got.URL != want.URL || !got.Date.Equal(want.Date) || got.File != want.File || got.Offset != want.Offset || got.Length != want.Length || got != want {
		t.Fatalf("GetDigest = %+v, %v, %v; want %+v", got, ok, err, want)
	}
}

// A capture of an earlier crawl is found by its SHA-1 or by the SHA-256
// its index gave, with the crawl it is in; a record written before
// Source existed (version 1) still reads.
func TestDigestOfEarlierCrawl(t *testing.T) {
	db := openMem(t)
	payload := []byte("payload of an earlier crawl")
	s1, s256 := sha1.Sum(payload), sha256.Sum256(payload)
	a := DigestRecord{URL: "http://a.test/x", Date: t0, Source: "/crawls/first.cdxj"}
	bRec := DigestRecord{URL: "http://a.test/y", Date: t0.Add(time.Hour), Source: "/crawls/first.wacz"}
	b := db.NewBatch()
	b.PutDigest(s1, a)
	b.PutDigestSHA256(s256, bRec)
	// A version 1 value, as builds before Source wrote it.
	old := sha1.Sum([]byte("old"))
	v1 := appendString(appendTime(appendString([]byte{1}, "http://a.test/old"), t0), "f.warc.gz")
	v1 = binary.AppendVarint(binary.AppendVarint(v1, 5), 6)
	v1 = appendString(binary.AppendVarint(append(v1, 0), 0), "<urn:uuid:2>")
	b.set(appendDigestKey(nil, old), v1)
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := db.GetDigest(s1); err != nil || !ok || got != a {
		t.Errorf("GetDigest = %+v, %v, %v; want %+v", got, ok, err, a)
	}
	if got, ok, err := db.GetDigestSHA256(s256); err != nil || !ok || got != bRec {
		t.Errorf("GetDigestSHA256 = %+v, %v, %v; want %+v", got, ok, err, bRec)
	}
	if got, ok, err := db.GetDigest(old); err != nil || !ok || got.URL != "http://a.test/old" || got.RecordID != "<urn:uuid:2>" || got.Source != "" {
		t.Errorf("version 1 record = %+v, %v, %v", got, ok, err)
	}
	var lens []int
	if err := db.ScanDigests(func(sum []byte, r DigestRecord) bool { lens = append(lens, len(sum)); return true }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(lens)
	if !slices.Equal(lens, []int{20, 20, 32}) {
		t.Errorf("ScanDigests saw sums of %v bytes, want 20, 20, 32", lens)
	}
}

func TestCaptureIndex(t *testing.T) {
	db := openMem(t)
	sum := sha1.Sum([]byte("p"))
	caps := []struct {
		key string
		r   CaptureRecord
	}{
		{"test,b)/", CaptureRecord{URL: "http://b.test/", Date: t0.Add(time.Hour), Status: 200, MIME: "text/html", Digest: sum, File: "f1", Offset: 10, Length: 20}},
		{"test,a)/x", CaptureRecord{URL: "http://a.test/x", Date: t0.Add(2 * time.Hour), Status: 200, MIME: "text/html", Digest: sum, File: "f2", Offset: 30, Length: 40, Kind: CaptureRevisit}},
		{"test,a)/x", CaptureRecord{URL: "http://a.test/x", Date: t0, Status: 200, MIME: "text/html", Digest: sum, File: "f1", Offset: 50, Length: 60, NearDupOf: "http://a.test/y", SimHash: 0xfeedfacecafebeef}},
		{"test,a)/xy", CaptureRecord{URL: "http://a.test/xy", Date: t0, Status: 404, File: "f1", Offset: 70, Length: 80}},
		{"test,a)/x", CaptureRecord{URL: "http://a.test/x", Date: time.Date(1969, 7, 20, 20, 17, 0, 0, time.UTC), Status: 200, Digest: sum, File: "f0"}},
	}
	b := db.NewBatch()
	for _, c := range caps {
		b.PutCapture(c.key, c.r)
	}
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	// One URL's captures, in time order, and none of a longer key's.
	var got []CaptureRecord
	if err := db.Captures("test,a)/x", func(r CaptureRecord) bool { got = append(got, r); return true }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].File != "f0" || got[0].Date.Year() != 1969 {
		t.Fatalf("Captures = %+v; want the capture of 1969 first", got)
	}
	if last, err := db.LastCaptures("test,a)/x", 2); err != nil || len(last) != 2 || last[0].File != "f2" || last[1].File != "f1" {
		t.Fatalf("LastCaptures(2) = %+v, %v; want the last two, newest first", last, err)
	}
	// Newest first: the same three, backwards, still none of a longer
	// key's; and a stop after the first.
	var back []string
	if err := db.CapturesNewestFirst("test,a)/x", func(r CaptureRecord) bool { back = append(back, r.File); return true }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back, []string{"f2", "f1", "f0"}) {
		t.Fatalf("CapturesNewestFirst saw %v, want f2, f1, f0", back)
	}
	if last, err := db.LastCaptures("test,a)/x", 10); err != nil || len(last) != 3 {
		t.Fatalf("LastCaptures(10) = %+v, %v; want the three", last, err)
	}
	back = back[:0]
	if err := db.CapturesNewestFirst("test,a)/x", func(r CaptureRecord) bool { back = append(back, r.File); return false }); err != nil || !slices.Equal(back, []string{"f2"}) {
		t.Fatalf("CapturesNewestFirst stopped after %v, %v; want f2 alone", back, err)
	}
	got = got[1:]
	if len(got) != 2 || !got[0].Date.Equal(t0) || got[0].NearDupOf != "http://a.test/y" || got[0].SimHash != 0xfeedfacecafebeef || got[1].Kind != CaptureRevisit || got[1].File != "f2" || got[1].Digest != sum {
		t.Fatalf("Captures = %+v", got)
	}
	// Everything, in CDX order.
	var order []string
	if err := db.ScanCaptures(func(key string, r CaptureRecord) bool {
		order = append(order, key+" "+r.Date.UTC().Format(time.TimeOnly))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if want := "test,a)/x 20:17:00|test,a)/x 12:00:00|test,a)/x 14:00:00|test,a)/xy 12:00:00|test,b)/ 13:00:00"; strings.Join(order, "|") != want {
		t.Fatalf("order %v, want %s", order, want)
	}
	b = db.NewBatch()
	b.PutCapture("bad\x00key", CaptureRecord{URL: "u", Date: t0})
	if err := b.Commit(false); err == nil {
		t.Fatal("a key with NUL was written")
	}
	b = db.NewBatch()
	b.PutCapture("k", CaptureRecord{URL: "u"})
	if err := b.Commit(false); err == nil {
		t.Fatal("a capture without date was written")
	}
	key := appendCaptureKey(nil, "k", t0)
	b = db.NewBatch()
	b.PutCapture("k", CaptureRecord{URL: "u", Date: t0})
	val := append([]byte(nil), b.val...)
	b.Close()
	for n := range len(val) {
		if _, _, err := decodeCapture(key, val[:n]); err == nil || !strings.Contains(err.Error(), `capture key="k"`) {
			t.Fatalf("prefix of %d bytes: %v", n, err)
		}
	}
}

// TestCaptureTitle: a page's title is kept with its capture, and a
// capture written before titles were (version 1) still reads, untitled.
func TestCaptureTitle(t *testing.T) {
	db := openMem(t)
	b := db.NewBatch()
	b.PutCapture("test,a)/", CaptureRecord{URL: "http://a.test/", Date: t0, Status: 200, MIME: "text/html", Title: "Ünïcode & <b>"})
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	last, err := db.LastCaptures("test,a)/", 1)
	if err != nil || len(last) != 1 || last[0].Title != "Ünïcode & <b>" {
		t.Fatalf("LastCaptures = %+v, %v; want the title kept", last, err)
	}
	key := appendCaptureKey(nil, "k", t0)
	b = db.NewBatch()
	b.PutCapture("k", CaptureRecord{URL: "u", Date: t0, NearDupOf: "v", SimHash: 7})
	v1 := append([]byte(nil), b.val[:len(b.val)-1]...) // without the empty title
	b.Close()
	v1[0] = 1
	if _, r, err := decodeCapture(key, v1); err != nil || r.URL != "u" || r.NearDupOf != "v" || r.SimHash != 7 || r.Title != "" {
		t.Fatalf("version 1 capture = %+v, %v", r, err)
	}
}

func TestSimHashes(t *testing.T) {
	db := openMem(t)
	if _, ok, err := db.GetSimHash(1); ok || err != nil {
		t.Fatalf("GetSimHash before Put: %v, %v", ok, err)
	}
	b := db.NewBatch()
	want := map[uint64]SimRecord{
		0xffff_0000_0000_0001: {URL: "http://a.test/1", Depth: 3},
		2:                     {URL: "http://a.test/1", Depth: 3, Copy: true, Links: [LinkWords]uint64{0: 5, LinkWords - 1: 1 << 63}},
		0:                     {URL: "http://b.test/", Depth: 12},
	}
	for fp, r := range want {
		b.PutSimHash(fp, r)
	}
	// A row an earlier version wrote, before copies joined the index: an
	// original.
	b.set(appendSimKey(nil, 7), binary.AppendVarint(appendString([]byte{1}, "http://c.test/"), 4))
	want[7] = SimRecord{URL: "http://c.test/", Depth: 4}
	// And one of version 2, before what the original links to was kept.
	b.set(appendSimKey(nil, 8), append(binary.AppendVarint(appendString([]byte{2}, "http://d.test/"), 5), 1))
	want[8] = SimRecord{URL: "http://d.test/", Depth: 5, Copy: true}
	// And one of version 3 written by hand: the filter in 16 big-endian words.
	v3 := append(binary.AppendVarint(appendString([]byte{3}, "http://e.test/"), 6), 0, 1)
	for i := range LinkWords {
		v3 = binary.BigEndian.AppendUint64(v3, uint64(i))
	}
	b.set(appendSimKey(nil, 9), v3)
	want[9] = SimRecord{URL: "http://e.test/", Depth: 6, Links: [LinkWords]uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}}
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	for fp, r := range want {
		if got, ok, err := db.GetSimHash(fp); got != r || !ok || err != nil {
			t.Errorf("GetSimHash(%x) = %+v, %v, %v; want %+v", fp, got, ok, err, r)
		}
	}
	var order []uint64
	if err := db.ScanSimHashes(func(fp uint64, r SimRecord) bool {
		if want[fp] != r {
			t.Errorf("scan: %x -> %+v, want %+v", fp, r, want[fp])
		}
		order = append(order, fp)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, []uint64{0, 2, 7, 8, 9, 0xffff_0000_0000_0001}) {
		t.Errorf("scan order %x", order)
	}
}
