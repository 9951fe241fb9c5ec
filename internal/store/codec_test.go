package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

var (
	fuzzHostKey  = appendHostKey(nil, 3, "a.test")
	fuzzURLKey   = appendURLKey(nil, 3, "a.test", hashOf("u"))
	fuzzFrontKey = appendFrontKey(nil, 1, 42)
	fuzzQueueKey = appendQueueKey(nil, 3, "a.test", 42)
)

func sampleHost() HostRecord {
	return HostRecord{Host: "a.test", NextAt: t0, CrawlDelay: time.Second, ErrorStreak: 2, Accepted: 99,
		Backoff: 4 * time.Second, Errors: 7, Parks: 1, GaveUp: true, Throttles: 5, ThrottledSince: t0.Add(-time.Minute),
		Wait: 4, WaitCause: "robots.txt 503"}
}

func sampleURL() URLRecord {
	return URLRecord{URL: "https://a.test/x", Depth: 3, Priority: 1, Status: URLFailed,
		LastStatus: 503, LastOutcome: "server-error", LastFetch: t0, NextCrawl: t0.Add(time.Hour),
		ETag: `W/"abc"`, LastModified: "Mon, 30 Nov 2026 10:00:00 GMT", Digest: [20]byte{1, 2, 3},
		Visits: 7.5, Changes: 2.25, Span: 86400.5,
		InLinks: 12, InSitemap: true, SitemapPriority: 0.8, SitemapLastMod: t0.Add(-time.Hour), Unchanged: 6,
		Dating: Dating{Dated: 1.96, Exposed: 3600.25, Modified: t0.Add(-2 * time.Hour), Undated: true}, Errors: 2, Rank: 300,
		TextHash: 0xfeedface12345678}
}

// withoutRank is a record as version 6 wrote it: version 7 without the
// trailing rank (and version 8's text hash).
func withoutRank(u URLRecord) []byte {
	v7 := withoutTextHash(u)
	return append([]byte{6}, v7[1:len(v7)-len(binary.AppendUvarint(nil, uint64(u.Rank)))]...)
}

// withoutTextHash is a record as version 7 wrote it: version 8 without
// the trailing text hash.
func withoutTextHash(u URLRecord) []byte {
	v8 := appendURLRecord(nil, &u)
	return append([]byte{7}, v8[1:len(v8)-len(binary.AppendUvarint(nil, u.TextHash))]...)
}

// datingLen is the bytes g takes at the end of a record.
func datingLen(g Dating) int { return len(appendDating(nil, &g)) }

// TestURLRecordVersion1 reads a record written before version 2, without
// the recrawl fields.
func TestURLRecordVersion1(t *testing.T) {
	v1 := []byte{1}
	v1 = appendString(v1, "https://a.test/x")
	v1 = binary.AppendVarint(v1, 3)
	v1 = append(v1, 1, byte(URLDone))
	v1 = binary.AppendVarint(v1, 200)
	v1 = appendString(v1, "ok")
	v1 = appendTime(v1, t0)
	v1 = appendTime(v1, time.Time{})
	r, err := decodeURLRecord(fuzzURLKey, v1)
	if err != nil || r.URL != "https://a.test/x" || r.LastStatus != 200 || !r.LastFetch.Equal(t0) || r.ETag != "" || r.Visits != 0 || r.SitemapPriority != -1 {
		t.Fatalf("version 1: %+v, %v", r, err)
	}
}

// TestURLRecordVersion2 reads a record written before version 3, without
// in-links and sitemap hints: no sitemap priority.
func TestURLRecordVersion2(t *testing.T) {
	u := sampleURL()
	u.Unchanged, u.Errors = 0, 0
	v6 := withoutRank(u)
	v3 := v6[:len(v6)-1-datingLen(u.Dating)-1] // without the unchanged count, the dating and the errors
	// Version 2 is version 3 without its last fields.
	tail := binary.AppendUvarint(nil, uint64(u.InLinks))
	tail = append(tail, 1)
	tail = binary.BigEndian.AppendUint64(tail, math.Float64bits(u.SitemapPriority))
	tail = appendTime(tail, u.SitemapLastMod)
	v2 := append([]byte{2}, v3[1:len(v3)-len(tail)]...)
	r, err := decodeURLRecord(fuzzURLKey, v2)
	if err != nil || r.Visits != u.Visits || r.ETag != u.ETag || r.InLinks != 0 || r.InSitemap || r.SitemapPriority != -1 || !r.SitemapLastMod.IsZero() {
		t.Fatalf("version 2: %+v, %v", r, err)
	}
}

// TestURLRecordVersion3 reads a record written before version 4, without
// the count of unchanged visits in a row (none), one written before
// version 5, without its Dating (none), and one written before version 6,
// without its errors in a row (none).
func TestURLRecordVersion3(t *testing.T) {
	u := sampleURL()
	v6 := withoutRank(u)
	u.Rank, u.TextHash = 0, 0
	e := len(binary.AppendUvarint(nil, uint64(u.Errors)))
	v5 := append([]byte{5}, v6[1:len(v6)-e]...)
	d := datingLen(u.Dating)
	v4 := append([]byte{4}, v5[1:len(v5)-d]...)
	n := len(binary.AppendUvarint(nil, uint64(u.Unchanged)))
	v3 := append([]byte{3}, v5[1:len(v5)-d-n]...)
	want := u
	want.Errors = 0
	if r, err := decodeURLRecord(fuzzURLKey, v5); err != nil || r != want {
		t.Fatalf("version 5: %+v, %v; want %+v", r, err, want)
	}
	want.Dating = Dating{}
	if r, err := decodeURLRecord(fuzzURLKey, v4); err != nil || r != want {
		t.Fatalf("version 4: %+v, %v; want %+v", r, err, want)
	}
	r, err := decodeURLRecord(fuzzURLKey, v3)
	want.Unchanged = 0
	if err != nil || r != want {
		t.Fatalf("version 3: %+v, %v; want %+v", r, err, want)
	}
	if r, err := decodeURLRecord(fuzzURLKey, v6); err != nil || r != u {
		t.Fatalf("version 6: %+v, %v; want %+v", r, err, u)
	}
}

// TestURLRecordVersion6 reads a record written before version 7, without
// the rank it was queued with, as rank 0; version 7 keeps it.
func TestURLRecordVersion6(t *testing.T) {
	u := sampleURL()
	want := u
	want.Rank, want.TextHash = 0, 0
	if r, err := decodeURLRecord(fuzzURLKey, withoutRank(u)); err != nil || r != want {
		t.Fatalf("version 6: %+v, %v; want %+v", r, err, want)
	}
	for _, rank := range []uint32{0, 1, 300, ^uint32(0)} {
		u.Rank = rank
		if r, err := decodeURLRecord(fuzzURLKey, appendURLRecord(nil, &u)); err != nil || r != u {
			t.Errorf("version 8, rank %d: %+v, %v", rank, r, err)
		}
	}
}

// TestURLRecordVersion7 reads a record written before version 8, without
// the hash of its visible text, as none; version 8 keeps it.
func TestURLRecordVersion7(t *testing.T) {
	u := sampleURL()
	want := u
	want.TextHash = 0
	if r, err := decodeURLRecord(fuzzURLKey, withoutTextHash(u)); err != nil || r != want {
		t.Fatalf("version 7: %+v, %v; want %+v", r, err, want)
	}
	for _, h := range []uint64{0, 1, ^uint64(0)} {
		u.TextHash = h
		if r, err := decodeURLRecord(fuzzURLKey, appendURLRecord(nil, &u)); err != nil || r != u {
			t.Errorf("version 8, text hash %x: %+v, %v", h, r, err)
		}
	}
}

// TestDecodeErrors checks that malformed values give errors that name the
// key, and that every strict prefix of a valid value is malformed.
func TestDecodeErrors(t *testing.T) {
	h := sampleHost()
	u := sampleURL()
	it := item("a.test", 3, 1)
	cases := []struct {
		name   string
		key    []byte
		val    []byte
		decode func(key, val []byte) error
	}{
		{"host", fuzzHostKey, appendHostRecord(nil, &h), func(k, v []byte) error { _, err := decodeHostRecord(k, v); return err }},
		{"url", fuzzURLKey, appendURLRecord(nil, &u), func(k, v []byte) error { _, err := decodeURLRecord(k, v); return err }},
		{"front", fuzzFrontKey, appendItem(nil, &it, true), func(k, v []byte) error { _, err := decodeFrontItem(k, v); return err }},
		{"queue", fuzzQueueKey, appendItem(nil, &it, false), func(k, v []byte) error { _, err := decodeQueueItem(k, v, 3, "a.test"); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.decode(c.key, c.val); err != nil {
				t.Fatalf("valid value: %v", err)
			}
			wantKey := fmtKey(c.key)
			for n := range len(c.val) {
				err := c.decode(c.key, c.val[:n])
				if err == nil {
					t.Fatalf("prefix of %d bytes decoded without error", n)
				}
				if !strings.Contains(err.Error(), wantKey) {
					t.Fatalf("error %q does not name key %s", err, wantKey)
				}
			}
			err := c.decode(c.key, append(bytes.Clone(c.val), 0))
			if err == nil || !strings.Contains(err.Error(), "trailing") {
				t.Errorf("trailing byte: %v", err)
			}
			newer := bytes.Clone(c.val)
			newer[0] = 200
			err = c.decode(c.key, newer)
			if !errors.Is(err, ErrNewerVersion) || !strings.Contains(err.Error(), "version 200") || !strings.Contains(err.Error(), wantKey) {
				t.Errorf("newer version: %v", err)
			}
			old := bytes.Clone(c.val)
			old[0] = 0
			if err := c.decode(c.key, old); err == nil || errors.Is(err, ErrNewerVersion) {
				t.Errorf("version 0: %v", err)
			}
		})
	}

	// Field checks beyond lengths.
	bad := u
	bad.Status = 0
	if _, err := decodeURLRecord(fuzzURLKey, appendURLRecord(nil, &bad)); err == nil {
		t.Error("url status 0 decoded")
	}
	bad.Status = URLRejected + 1
	if _, err := decodeURLRecord(fuzzURLKey, appendURLRecord(nil, &bad)); err == nil {
		t.Error("unknown url status decoded")
	}
	nul := it
	nul.Host = "a\x00b"
	if _, err := decodeFrontItem(fuzzFrontKey, appendItem(nil, &nul, true)); err == nil {
		t.Error("front item with a NUL host decoded")
	}
	bigPart := []byte{frontVersion, 0, 1, 'h', 0x80, 0x80, 0x04} // partition 65536
	bigPart = append(bigPart, make([]byte, 5)...)
	if _, err := decodeFrontItem(fuzzFrontKey, bigPart); err == nil {
		t.Error("front item with partition 65536 decoded")
	}
	hugeLen := []byte{urlVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}
	if _, err := decodeURLRecord(fuzzURLKey, hugeLen); err == nil {
		t.Error("url with a 2^64 byte string decoded")
	}
	if _, err := decodeHostRecord(fuzzURLKey, appendHostRecord(nil, &h)); err == nil {
		t.Error("host record under a url key decoded")
	}
}

// TestGarbageInStore checks that a malformed value read through the DB is an
// error naming the store and the key.
func TestGarbageInStore(t *testing.T) {
	db := openMem(t)
	for _, k := range [][]byte{fuzzHostKey, fuzzURLKey, fuzzFrontKey, fuzzQueueKey} {
		if err := db.pdb.Set(k, []byte{1, 0xff}, nil); err != nil {
			t.Fatal(err)
		}
	}
	newer := appendHostKey(nil, 3, "new.test")
	if err := db.pdb.Set(newer, []byte{hostVersion + 1}, nil); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error, key []byte) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		for _, want := range []string{"/db", fmtKey(key)} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not contain %q", what, err, want)
			}
		}
	}
	_, _, err := db.GetHost(3, "a.test")
	check("GetHost", err, fuzzHostKey)
	_, _, err = db.GetURL(3, "a.test", hashOf("u"))
	check("GetURL", err, fuzzURLKey)
	if has, err := db.HasURL(3, "a.test", hashOf("u")); !has || err != nil {
		t.Errorf("HasURL does not decode, so it answers: %v, %v", has, err)
	}
	_, err = db.FrontRange(1, 0, 10)
	check("FrontRange", err, fuzzFrontKey)
	_, err = db.QueueRange(3, "a.test", 0, 10)
	check("QueueRange", err, fuzzQueueKey)
	err = db.ScanHosts(3, func(HostRecord) bool { return true })
	check("ScanHosts", err, fuzzHostKey)
	_, _, err = db.GetHost(3, "new.test")
	check("GetHost newer", err, newer)
	if !errors.Is(err, ErrNewerVersion) {
		t.Errorf("GetHost of a newer record = %v, want ErrNewerVersion", err)
	}
}

func TestZeroTime(t *testing.T) {
	r := URLRecord{URL: "x", Status: URLQueued}
	got, err := decodeURLRecord(fuzzURLKey, appendURLRecord(nil, &r))
	if err != nil || !got.LastFetch.IsZero() || !got.NextCrawl.IsZero() {
		t.Errorf("zero times came back as %v, %v (%v)", got.LastFetch, got.NextCrawl, err)
	}
	// Zero time takes one byte.
	if n := len(appendTime(nil, time.Time{})); n != 1 {
		t.Errorf("zero time takes %d bytes", n)
	}
	local := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))
	r.LastFetch = local
	got, _ = decodeURLRecord(fuzzURLKey, appendURLRecord(nil, &r))
	if !got.LastFetch.Equal(local) {
		t.Errorf("time %v came back as %v", local, got.LastFetch)
	}
}

func FuzzDecodeHost(f *testing.F) {
	h := sampleHost()
	f.Add(appendHostRecord(nil, &h))
	f.Add(appendHostRecord(nil, &HostRecord{Host: "a.test"}))
	f.Add([]byte{})
	f.Add([]byte{2})
	f.Fuzz(func(t *testing.T, val []byte) {
		r, err := decodeHostRecord(fuzzHostKey, val)
		if err != nil {
			if !strings.Contains(err.Error(), fmtKey(fuzzHostKey)) {
				t.Fatalf("error %q does not name the key", err)
			}
			return
		}
		again, err := decodeHostRecord(fuzzHostKey, appendHostRecord(nil, &r))
		if err != nil || !hostEqual(again, r) {
			t.Fatalf("re-encoding %+v gave %+v, %v", r, again, err)
		}
	})
}

func FuzzDecodeURL(f *testing.F) {
	u := sampleURL()
	f.Add(appendURLRecord(nil, &u))
	f.Add(appendURLRecord(nil, &URLRecord{Status: URLQueued}))
	f.Add([]byte{1, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, val []byte) {
		r, err := decodeURLRecord(fuzzURLKey, val)
		if err != nil {
			if !strings.Contains(err.Error(), fmtKey(fuzzURLKey)) {
				t.Fatalf("error %q does not name the key", err)
			}
			return
		}
		again, err := decodeURLRecord(fuzzURLKey, appendURLRecord(nil, &r))
		if err != nil || !urlEqual(again, r) {
			t.Fatalf("re-encoding %+v gave %+v, %v", r, again, err)
		}
	})
}

func FuzzDecodeFrontItem(f *testing.F) {
	it := item("a.test", 300, 5)
	f.Add(appendItem(nil, &it, true))
	f.Add(appendItem(nil, &QueueItem{Host: "h"}, true))
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, val []byte) {
		r, err := decodeFrontItem(fuzzFrontKey, val)
		if err != nil {
			if !strings.Contains(err.Error(), fmtKey(fuzzFrontKey)) {
				t.Fatalf("error %q does not name the key", err)
			}
			return
		}
		again, err := decodeFrontItem(fuzzFrontKey, appendItem(nil, &r, true))
		if err != nil || !itemEqual(again, r) {
			t.Fatalf("re-encoding %+v gave %+v, %v", r, again, err)
		}
	})
}

func FuzzDecodeQueueItem(f *testing.F) {
	it := item("a.test", 3, 5)
	f.Add(appendItem(nil, &it, false))
	f.Add(appendItem(nil, &QueueItem{}, false))
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, val []byte) {
		r, err := decodeQueueItem(fuzzQueueKey, val, 3, "a.test")
		if err != nil {
			if !strings.Contains(err.Error(), fmtKey(fuzzQueueKey)) {
				t.Fatalf("error %q does not name the key", err)
			}
			return
		}
		if r.Host != "a.test" || r.Part != 3 {
			t.Fatalf("queue item host/part = %q/%d, want the key's", r.Host, r.Part)
		}
		again, err := decodeQueueItem(fuzzQueueKey, appendItem(nil, &r, false), 3, "a.test")
		if err != nil || !itemEqual(again, r) {
			t.Fatalf("re-encoding %+v gave %+v, %v", r, again, err)
		}
	})
}

// FuzzDecodeKey feeds arbitrary keys to the key parsers and formatter.
func FuzzDecodeKey(f *testing.F) {
	for _, k := range [][]byte{fuzzHostKey, fuzzURLKey, fuzzFrontKey, fuzzQueueKey, appendMetaKey(nil, "m"), {}, {'Q', 0, 0, 0}} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, k []byte) {
		_ = fmtKey(k)
		if hk, err := parseHostKey(k); err == nil {
			if checkHost(hk.host) != nil {
				t.Fatalf("parsed invalid host %q from %q", hk.host, k)
			}
			rebuilt := append(appendHostPrefix(nil, hk.tag, hk.part, hk.host), hk.rest...)
			if !bytes.Equal(rebuilt, k) {
				t.Fatalf("key %q parsed to %+v, which rebuilds %q", k, hk, rebuilt)
			}
		}
		if part, host, seq, err := parseQueueKey(k); err == nil {
			if !bytes.Equal(appendQueueKey(nil, part, host, seq), k) {
				t.Fatalf("queue key %q does not round-trip", k)
			}
		}
		if prio, seq, err := parseFrontKey(k); err == nil {
			if !bytes.Equal(appendFrontKey(nil, prio, seq), k) {
				t.Fatalf("front key %q does not round-trip", k)
			}
		}
	})
}

func TestPrefixEnd(t *testing.T) {
	for _, c := range []struct{ in, want []byte }{
		{[]byte("F\x01"), []byte("F\x02")},
		{[]byte("F\xff"), []byte("G")},
		{[]byte("Q\x00\x01a\x00"), []byte("Q\x00\x01a\x01")},
		{[]byte("\xff\xff"), nil},
	} {
		in := bytes.Clone(c.in)
		if got := prefixEnd(in); !bytes.Equal(got, c.want) {
			t.Errorf("prefixEnd(%q) = %q, want %q", c.in, got, c.want)
		}
		if !bytes.Equal(in, c.in) {
			t.Errorf("prefixEnd modified its input")
		}
	}
}

// TestQueueItemVersion1 reads queue values written before items carried
// Fetch (version 1), their flags (version 2) and their Rank (version 3):
// a crawl resumed by a newer build keeps its queues. A version 3 value
// keeps Requisite, and Sitemap in a flag bit that a value written before
// it leaves clear; a version 4 value keeps Rank, a version 5 its Seed, a
// version 6 its Path.
func TestQueueItemVersion1(t *testing.T) {
	it := item("a.test", 3, 1)
	it.Fetch, it.Path = "", ""
	for _, front := range []bool{true, false} {
		v6 := appendItem(nil, &it, front)
		// Version 5 is version 6 without the trailing Path (an empty
		// string: one zero length byte), version 4 is version 5 without
		// the trailing Seed (zero: one byte), version 3 is version 4
		// without the trailing Rank (zero: one byte), version 2 is version
		// 3 without the trailing flags byte, and version 1 is version 2
		// without the trailing Fetch (another empty string).
		v5 := bytes.Clone(v6[:len(v6)-1])
		v5[0] = 5
		v4 := bytes.Clone(v5[:len(v5)-1])
		v4[0] = 4
		v3 := bytes.Clone(v4[:len(v4)-1])
		v3[0] = 3
		v2 := bytes.Clone(v3[:len(v3)-1])
		v2[0] = 2
		v1 := bytes.Clone(v2[:len(v2)-1])
		v1[0] = 1
		for name, v := range map[string][]byte{"version 1": v1, "version 2": v2, "version 3": v3, "version 4": v4, "version 5": v5} {
			var got QueueItem
			var err error
			if front {
				got, err = decodeFrontItem(fuzzFrontKey, v)
			} else {
				got, err = decodeQueueItem(fuzzQueueKey, v, 3, "a.test")
			}
			if err != nil {
				t.Fatalf("front=%v: %s value: %v", front, name, err)
			}
			if !itemEqual(got, it) {
				t.Errorf("front=%v: %s decoded as %+v, want %+v", front, name, got, it)
			}
		}
		ranked := it
		ranked.Rank, ranked.Again, ranked.Path = 1<<20, true, "12+"+strings.Repeat("LE", 25)
		var got QueueItem
		var err error
		if front {
			got, err = decodeFrontItem(fuzzFrontKey, appendItem(nil, &ranked, front))
		} else {
			got, err = decodeQueueItem(fuzzQueueKey, appendItem(nil, &ranked, front), 3, "a.test")
		}
		if err != nil || got.Rank != ranked.Rank || !itemEqual(got, ranked) {
			t.Errorf("front=%v: a ranked item decoded as %+v, %v", front, got, err)
		}
		req := it
		req.Requisite = true
		if front {
			got, err = decodeFrontItem(fuzzFrontKey, appendItem(nil, &req, front))
		} else {
			got, err = decodeQueueItem(fuzzQueueKey, appendItem(nil, &req, front), 3, "a.test")
		}
		if err != nil || !got.Requisite || got.Sitemap || !itemEqual(got, req) {
			t.Errorf("front=%v: a requisite decoded as %+v, %v", front, got, err)
		}
		sm := it
		sm.Sitemap = true
		if front {
			got, err = decodeFrontItem(fuzzFrontKey, appendItem(nil, &sm, front))
		} else {
			got, err = decodeQueueItem(fuzzQueueKey, appendItem(nil, &sm, front), 3, "a.test")
		}
		if err != nil || !got.Sitemap || got.Requisite || !itemEqual(got, sm) {
			t.Errorf("front=%v: a sitemap decoded as %+v, %v", front, got, err)
		}
	}
}

// TestQueueItemVersion4 reads a queue value written before items
// carried their seed's id as seed 0 (none), and keeps the id a version 5
// value carries, in the front queue and a host's tail alike.
func TestQueueItemVersion4(t *testing.T) {
	it := item("a.test", 3, 1)
	it.Rank, it.Path = 7, ""
	for _, front := range []bool{true, false} {
		decode := func(v []byte) (QueueItem, error) {
			if front {
				return decodeFrontItem(fuzzFrontKey, v)
			}
			return decodeQueueItem(fuzzQueueKey, v, 3, "a.test")
		}
		v4 := appendItem(nil, &it, front)
		v4 = v4[:len(v4)-2] // the trailing Seed, zero, and Path, empty: a byte each
		v4[0] = 4
		got, err := decode(v4)
		if err != nil || got.Seed != 0 || !itemEqual(got, it) {
			t.Errorf("front=%v: version 4 decoded as %+v, %v; want %+v", front, got, err, it)
		}
		seeded := it
		seeded.Seed = 0xfedcba98
		got, err = decode(appendItem(nil, &seeded, front))
		if err != nil || got.Seed != seeded.Seed || !itemEqual(got, seeded) {
			t.Errorf("front=%v: version 6 decoded as %+v, %v; want seed %#x", front, got, err, seeded.Seed)
		}
	}
}

// TestHostRecordOlderVersions reads host records written before the clock
// kept backoff, errors and parks (1), before robots.txt moved to its own
// record (1 and 2): their robots.txt fields are skipped; and before the
// run of 429s was kept (1 to 3); and before the reason of the wait was
// kept (1 to 4).
func TestHostRecordOlderVersions(t *testing.T) {
	h := sampleHost()
	v5 := appendHostRecord(nil, &h)
	// Version 5 added the wait's reason and cause at the end: a byte and
	// a string.
	wait := appendString([]byte{h.Wait}, h.WaitCause)
	v4 := bytes.Clone(v5[:len(v5)-len(wait)])
	v4[0] = 4
	h.Wait, h.WaitCause = 0, ""
	h4 := h
	// Version 4 added the run of 429s at the end: a varint and a time.
	throttles := appendTime(binary.AppendVarint(nil, int64(h.Throttles)), h.ThrottledSince)
	v3 := bytes.Clone(v4[:len(v4)-len(throttles)])
	v3[0] = 3
	h.Throttles, h.ThrottledSince = 0, time.Time{}
	// Versions 1 and 2 had robots.txt fields after Accepted: a time, a
	// status, an outcome byte, an error and a body.
	robots := appendBytes(appendString(append(binary.AppendVarint(appendTime(nil, t0), 200), 1), "e"), []byte("User-agent: *\n"))
	// Version 2 added backoff, errors, parks (varints) and the flag at the end.
	tail := append(binary.AppendVarint(binary.AppendVarint(binary.AppendVarint(nil, int64(h.Backoff)), int64(h.Errors)), int64(h.Parks)), 1)
	head := len(v3) - len(tail)
	v2 := append(append(bytes.Clone(v3[:head]), robots...), v3[head:]...)
	v2[0] = 2
	v1 := bytes.Clone(v2[:len(v2)-len(tail)])
	v1[0] = 1
	old := h
	old.Backoff, old.Errors, old.Parks, old.GaveUp = 0, 0, 0, false
	for _, c := range []struct {
		val  []byte
		want HostRecord
	}{{v4, h4}, {v3, h}, {v2, h}, {v1, old}} {
		got, err := decodeHostRecord(fuzzHostKey, c.val)
		if err != nil {
			t.Fatalf("version %d: %v", c.val[0], err)
		}
		if !hostEqual(got, c.want) {
			t.Errorf("version %d decoded as %+v, want %+v", c.val[0], got, c.want)
		}
	}
}

func TestRobotsRecordRoundTrip(t *testing.T) {
	db := openMem(t)
	r := RobotsRecord{Host: "a.test", Scheme: "https", FetchedAt: t0, Status: 200, Outcome: 1, Body: []byte("User-agent: *\nDisallow: /x\n"),
		Failures: 2, FailingSince: t0.Add(time.Hour), LastFailure: t0.Add(2 * time.Hour), FailStatus: 503, Err: "server error"}
	b := db.NewBatch()
	b.PutRobots(7, r)
	b.PutHost(7, sampleHost()) // beside it, unaffected
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	got, ok, err := db.GetRobots(7, "a.test", "https")
	if err != nil || !ok || got.Host != r.Host || got.Scheme != r.Scheme || !got.FetchedAt.Equal(r.FetchedAt) || got.Status != r.Status ||
		got.Outcome != r.Outcome || got.Err != r.Err || !bytes.Equal(got.Body, r.Body) || got.Failures != r.Failures ||
		!got.FailingSince.Equal(r.FailingSince) || !got.LastFailure.Equal(r.LastFailure) || got.FailStatus != r.FailStatus {
		t.Fatalf("GetRobots = %+v, %v, %v; want %+v", got, ok, err, r)
	}
	if h, ok, err := db.GetHost(7, "a.test"); err != nil || !ok || !hostEqual(h, sampleHost()) {
		t.Fatalf("GetHost beside it = %+v, %v, %v", h, ok, err)
	}
	if _, ok, err := db.GetRobots(7, "b.test", "https"); ok || err != nil {
		t.Fatalf("GetRobots of an unknown host: %v, %v", ok, err)
	}
	b = db.NewBatch()
	b.PutRobots(7, RobotsRecord{Host: "big.test", Scheme: "http", Body: make([]byte, MaxRobotsBody+1)})
	if err := b.Commit(false); err == nil {
		t.Fatal("an oversized robots.txt was written")
	}
	key := appendRobotsKey(nil, 7, "a.test", "https")
	val := appendRobotsRecord(nil, &r)
	for n := range len(val) {
		if _, err := decodeRobotsRecord(key, val[:n]); err == nil || !strings.Contains(err.Error(), "robots part=7") {
			t.Fatalf("prefix of %d bytes: %v", n, err)
		}
	}

	// Version 1 kept one answer; a failed one becomes one failure.
	v1 := []byte{1}
	v1 = appendTime(v1, t0)
	v1 = binary.AppendVarint(v1, 503)
	v1 = append(v1, robotsV1Failed)
	v1 = appendString(v1, "server error")
	v1 = appendBytes(v1, nil)
	got, err = decodeRobotsRecord(key, v1)
	if err != nil || got.Outcome != 0 || got.Failures != 1 || !got.LastFailure.Equal(t0) || got.FailStatus != 503 || got.Err != "server error" {
		t.Fatalf("version 1 failure decoded as %+v, %v", got, err)
	}
}

// A host's robots.txt is kept per scheme: http and https each have their
// record. A record of the time before that (keyed by host alone, its
// scheme unknown) is never read for either, and the host's next record
// deletes it.
func TestRobotsRecordsByScheme(t *testing.T) {
	db := openMem(t)
	legacy := appendRobotsKey(nil, 3, "a.test", "")
	b := db.NewBatch()
	b.set(legacy, appendRobotsRecord(nil, &RobotsRecord{Host: "a.test", FetchedAt: t0, Status: 200, Outcome: 1, Body: []byte("User-agent: *\nDisallow: /\n")}))
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	for _, scheme := range []string{"http", "https"} {
		if r, ok, err := db.GetRobots(3, "a.test", scheme); ok || err != nil {
			t.Fatalf("GetRobots(%s) before any record of it = %+v, %v, %v; want none", scheme, r, ok, err)
		}
	}
	b = db.NewBatch()
	b.PutRobots(3, RobotsRecord{Host: "a.test", Scheme: "https", FetchedAt: t0, Status: 200, Outcome: 1, Body: []byte("User-agent: *\nDisallow: /s\n")})
	b.PutRobots(3, RobotsRecord{Host: "a.test", Scheme: "http", FetchedAt: t0, Status: 404, Outcome: 2})
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	if r, ok, err := db.GetRobots(3, "a.test", "https"); err != nil || !ok || r.Scheme != "https" || string(r.Body) != "User-agent: *\nDisallow: /s\n" {
		t.Errorf("https record = %+v, %v, %v", r, ok, err)
	}
	if r, ok, err := db.GetRobots(3, "a.test", "http"); err != nil || !ok || r.Scheme != "http" || r.Status != 404 || r.Body != nil {
		t.Errorf("http record = %+v, %v, %v", r, ok, err)
	}
	if ok, err := db.get(legacy, func([]byte) error { return nil }); ok || err != nil {
		t.Errorf("the record keyed by host alone is still there (%v, %v)", ok, err)
	}
	b = db.NewBatch()
	b.PutRobots(3, RobotsRecord{Host: "a.test"})
	if err := b.Commit(false); err == nil || !strings.Contains(err.Error(), "scheme") {
		t.Errorf("a record without a scheme: %v", err)
	}
	if got := fmtKey(appendRobotsKey(nil, 3, "a.test", "https")); got != `robots part=3 host="a.test" scheme="https"` {
		t.Errorf("fmtKey = %s", got)
	}
}
