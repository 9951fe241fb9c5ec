package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

const urlset = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc> https://a.test/one </loc>
    <lastmod>2026-11-30T10:20:30+01:00</lastmod>
    <changefreq>Daily</changefreq>
    <priority>0.8</priority>
    <image:image><image:loc>https://a.test/photo.jpg</image:loc></image:image>
  </url>
  <url><loc>https://a.test/two?a=1&amp;b=2</loc><lastmod>2026-11</lastmod><priority>7</priority></url>
  <url><loc>https://a.test/three</loc><lastmod>last tuesday</lastmod><changefreq>sometimes</changefreq></url>
  <url><lastmod>2026</lastmod></url>
</urlset>
`

func TestURLSet(t *testing.T) {
	res, err := Parse(strings.NewReader(urlset), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != URLSet || res.Truncated != "" || res.Skipped != 1 || res.BadLastMod != 1 || res.Gzipped {
		t.Errorf("result %+v", res)
	}
	want := []Entry{
		{Loc: "https://a.test/one", LastMod: time.Date(2026, 11, 30, 9, 20, 30, 0, time.UTC), ChangeFreq: "daily", Priority: 0.8, Line: 3},
		{Loc: "https://a.test/two?a=1&b=2", LastMod: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Priority: -1, Line: 10},
		{Loc: "https://a.test/three", Priority: -1, Line: 11},
	}
	if len(res.Entries) != len(want) {
		t.Fatalf("%d entries: %+v", len(res.Entries), res.Entries)
	}
	for i, e := range res.Entries {
		if e != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, e, want[i])
		}
	}
}

func TestIndexAndGzip(t *testing.T) {
	index := `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>https://a.test/s1.xml.gz</loc><lastmod>2026-11-29</lastmod></sitemap>
<sitemap><loc>https://a.test/s2.xml</loc></sitemap>
</sitemapindex>`
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(index))
	zw.Close()
	res, err := Parse(&buf, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != Index || !res.Gzipped || len(res.Entries) != 2 || res.Entries[0].Loc != "https://a.test/s1.xml.gz" ||
		!res.Entries[0].LastMod.Equal(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)) || res.Entries[1].Loc != "https://a.test/s2.xml" {
		t.Errorf("index %+v", res)
	}
	// A <url> in an index, or a <sitemap> in a urlset, is not an entry.
	mixed := `<urlset><sitemap><loc>https://a.test/x</loc></sitemap><url><loc>https://a.test/y</loc></url></urlset>`
	if res, err := Parse(strings.NewReader(mixed), Limits{}); err != nil || len(res.Entries) != 1 || res.Entries[0].Loc != "https://a.test/y" {
		t.Errorf("mixed: %+v, %v", res, err)
	}
}

func TestLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := range 100 {
		fmt.Fprintf(&b, "<url><loc>https://a.test/%d</loc></url>\n", i)
	}
	b.WriteString("</urlset>")
	doc := b.String()

	res, err := Parse(strings.NewReader(doc), Limits{MaxEntries: 30})
	if err != nil || res.Truncated != "entries" || len(res.Entries) != 30 || res.Entries[29].Loc != "https://a.test/29" {
		t.Errorf("entry limit: %d entries, truncated %q, %v", len(res.Entries), res.Truncated, err)
	}
	res, err = Parse(strings.NewReader(doc), Limits{MaxBytes: 1000})
	if err != nil || res.Truncated != "bytes" || len(res.Entries) == 0 || len(res.Entries) > 30 {
		t.Errorf("byte limit: %d entries, truncated %q, %v", len(res.Entries), res.Truncated, err)
	}
	// Exactly at the limit is whole.
	res, err = Parse(strings.NewReader(doc), Limits{MaxBytes: int64(len(doc))})
	if err != nil || res.Truncated != "" || len(res.Entries) != 100 {
		t.Errorf("at the byte limit: %d entries, truncated %q, %v", len(res.Entries), res.Truncated, err)
	}
	// The byte limit counts uncompressed bytes: a gzip bomb stops there.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(`<urlset><url><loc>https://a.test/x</loc></url><!--`))
	zw.Write(bytes.Repeat([]byte{' '}, 8<<20))
	zw.Close()
	res, err = Parse(&buf, Limits{MaxBytes: 1 << 20})
	if err != nil || res.Truncated != "bytes" || len(res.Entries) != 1 {
		t.Errorf("gzip bomb: %+v, %v", res, err)
	}
	if MaxEntries != 50000 || MaxBytes != 50<<20 {
		t.Error("the protocol's limits are 50,000 URLs and 50 MB")
	}
}

func TestBadDocuments(t *testing.T) {
	for name, c := range map[string]struct {
		doc, want string
		entries   int
	}{
		"malformed":    {"<urlset>\n<url><loc>https://a.test/1</loc></url>\n<url><loc>https://a.test/2</url>\n</urlset>", "malformed XML at line 3", 1},
		"html":         {"<!DOCTYPE html><html><body>Not found</body></html>", "root element <html>: not a sitemap", 0},
		"feed":         {`<rss version="2.0"><channel></channel></rss>`, "root element <rss>: not a sitemap", 0},
		"empty":        {"", "empty document: not a sitemap", 0},
		"cut short":    {"<urlset><url><loc>https://a.test/1</loc></url><url>", "malformed XML at line 1", 1},
		"bad gzip":     {"\x1f\x8b\x08\x00garbage", "gzip", 0},
		"long loc":     {"<urlset><url><loc>https://a.test/" + strings.Repeat("a", 3000) + "</loc></url></urlset>", "", 0},
		"binary noise": {"\x00\x01\x02", "malformed XML", 0},
	} {
		res, err := Parse(strings.NewReader(c.doc), Limits{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one with %q", name, err, c.want)
		}
		if len(res.Entries) != c.entries {
			t.Errorf("%s: %d entries, want %d", name, len(res.Entries), c.entries)
		}
	}
	// What follows the root is not read: a second root, or trailing bytes
	// past the byte limit.
	two := "<urlset><url><loc>https://a.test/1</loc></url></urlset><sitemapindex><sitemap><loc>https://a.test/s</loc></sitemap></sitemapindex>"
	if res, err := Parse(strings.NewReader(two), Limits{}); err != nil || res.Kind != URLSet || len(res.Entries) != 1 {
		t.Errorf("two roots: %+v, %v", res, err)
	}
	padded := "<urlset><url><loc>https://a.test/1</loc></url></urlset>" + strings.Repeat(" ", 100)
	if res, err := Parse(strings.NewReader(padded), Limits{MaxBytes: 60}); err != nil || res.Truncated != "" || len(res.Entries) != 1 {
		t.Errorf("trailing space past the limit: %+v, %v", res, err)
	}
	if _, err := Parse(strings.NewReader("<feed/>"), Limits{}); !errors.Is(err, ErrNotSitemap) {
		t.Errorf("a feed: %v, want ErrNotSitemap", err)
	}
}

func TestW3CDates(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2026":                      time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		"2026-03":                   time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		"2026-03-04":                time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC),
		"2026-03-04T05:06Z":         time.Date(2026, 3, 4, 5, 6, 0, 0, time.UTC),
		"2026-03-04T05:06:07-02:00": time.Date(2026, 3, 4, 7, 6, 7, 0, time.UTC),
		"2026-03-04T05:06:07.5Z":    time.Date(2026, 3, 4, 5, 6, 7, 5e8, time.UTC),
	} {
		if got, err := ParseW3CDate(in); err != nil || !got.Equal(want) {
			t.Errorf("ParseW3CDate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"2026-13-01", "04/03/2026", "2026-03-04T05:06", "yesterday"} {
		if _, err := ParseW3CDate(bad); err == nil {
			t.Errorf("ParseW3CDate(%q) accepted", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(urlset))
	f.Add([]byte(`<sitemapindex><sitemap><loc>x</loc></sitemap></sitemapindex>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, _ := Parse(bytes.NewReader(b), Limits{MaxEntries: 100, MaxBytes: 1 << 16})
		if len(res.Entries) > 100 {
			t.Fatalf("%d entries past the limit", len(res.Entries))
		}
		for _, e := range res.Entries {
			if e.Loc == "" || len(e.Loc) > maxLoc {
				t.Fatalf("entry with loc %q", e.Loc)
			}
		}
	})
}
