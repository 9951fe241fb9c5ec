package store

import (
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// MaxRobotsBody is the largest robots.txt body a RobotsRecord may hold (RFC
// 9309 asks crawlers to parse at least 500 KiB; more is ignored).
const MaxRobotsBody = 500 << 10

// Record format versions. Bump one when its layout changes; a reader
// refuses versions newer than it knows.
const (
	hostVersion   = 5 // 2 adds backoff, errors, parks and given-up; 3 moves robots.txt to RobotsRecord; 4 the run of 429s; 5 why the host waits
	robotsVersion = 2 // 2 keeps the last good answer beside the failures since
	urlVersion    = 8 // 2 adds what a recrawl needs: validators, digest, change history; 3 what ranks it: in-links, sitemap hints; 4 unchanged visits in a row; 5 its Dating; 6 errors in a row; 7 the rank it was queued with; 8 the hash of its visible text
	frontVersion  = 6 // QueueItem with host and partition; 2 adds Fetch, 3 its flags, 4 its Rank, 5 its Seed, 6 its Path
	queueVersion  = 6 // QueueItem without them (the key has them); 2 adds Fetch, 3 its flags, 4 its Rank, 5 its Seed, 6 its Path
)

// ErrNewerVersion is wrapped by decode errors for a record written by a
// newer build of weft.
var ErrNewerVersion = errors.New("record version is newer than this build understands")

// QueueItem is one URL waiting in a front or back queue.
type QueueItem struct {
	URL      string
	Host     string // politeness key; must not be empty or contain 0x00
	Part     uint16 // partition of Host
	Depth    int    // link hops from a seed
	Hops     int    // redirect hops that led here
	Priority uint8  // front queue
	Rank     uint32 // importance when queued (frontier.Item.Rank)
	Via      string // URL that linked or redirected here ("" for a seed)
	Added    time.Time
	Fetch    string // URL to request when it differs from URL ("" if not)
	// Requisite says the URL was found as a page's requisite (a style
	// sheet, an image): its links are not followed.
	Requisite bool
	// Sitemap says the URL was found as a sitemap (a flag bit a build
	// before it left clear, so its records read as pages).
	Sitemap bool
	// Again says the item is a copy of a URL queued again (a flag bit).
	Again bool
	// Seed is the id of the seed that found it (package seeds); an item
	// of version 4 or older reads as 0, no seed.
	Seed uint32
	// Path is how it was found from its seed, as Heritrix's discovery
	// path writes it ("LLE"; "" for a seed), bounded (crawllog.Extend);
	// "" for an item of version 5 or older.
	Path string
}

// FrontEntry is a front-queue entry and its position.
type FrontEntry struct {
	Seq  uint64
	Item QueueItem
}

// QueueEntry is a back-queue entry and its position.
type QueueEntry struct {
	Seq  uint64
	Item QueueItem
}

// HostRecord is what the crawl knows about one host.
type HostRecord struct {
	Host        string
	NextAt      time.Time     // earliest start of the next request
	CrawlDelay  time.Duration // robots.txt Crawl-delay
	ErrorStreak int           // consecutive failed fetches
	Backoff     time.Duration // grows on 429/503, shrinks on success
	Errors      int           // failed fetches in all
	Parks       int           // times parked for a failure streak
	GaveUp      bool          // too many failures: the host's URLs are dropped
	Accepted    int64         // URLs accepted for this host (the per-host cap)
	// Throttles counts the 429 answers in a row, the first at
	// ThrottledSince: a run long enough gives the host up, and it goes on
	// across a restart.
	Throttles      int
	ThrottledSince time.Time
	// Wait says what set NextAt (the frontier's reason, opaque here) and
	// WaitCause what the host last answered, when that was a failure:
	// so that a restarted crawl can still say what a host waits for.
	Wait      uint8
	WaitCause string
}

// RobotsRecord is the last answer of a host's robots.txt for one scheme
// (a file applies to the scheme, host and port it is served from), kept
// apart from the HostRecord: that one is rewritten after every request,
// this one only when robots.txt is fetched.
type RobotsRecord struct {
	Host   string
	Scheme string // "http" or "https"; "" only in a record written before files were kept by scheme
	// The last good answer (Outcome 0 if there was none).
	FetchedAt time.Time
	Status    int    // HTTP status of the robots.txt fetch, 0 if none
	Outcome   uint8  // the robots package's verdict, opaque here
	Body      []byte // raw robots.txt, at most MaxRobotsBody bytes, re-parsed after a restart
	// The failed fetches since (or since the first fetch).
	Failures                  int
	FailingSince, LastFailure time.Time
	FailStatus                int    // HTTP status of the last failure, 0 if none
	Err                       string // why the last fetch failed
}

// URLStatus is where a URL is in its life.
type URLStatus uint8

// URL statuses.
const (
	URLQueued URLStatus = iota + 1
	URLDone
	URLFailed
	URLRejected
)

func (s URLStatus) String() string {
	switch s {
	case URLQueued:
		return "queued"
	case URLDone:
		return "done"
	case URLFailed:
		return "failed"
	case URLRejected:
		return "rejected"
	}
	return fmt.Sprintf("urlstatus(%d)", uint8(s))
}

// URLRecord is what the crawl knows about one accepted URL. Its presence
// makes the URL seen.
type URLRecord struct {
	URL         string
	Depth       int
	Priority    uint8
	Status      URLStatus
	LastStatus  int    // HTTP status of the last fetch, 0 if never fetched
	LastOutcome string // outcome of the last fetch ("ok", "timeout", ...)
	LastFetch   time.Time
	NextCrawl   time.Time
	// What a recrawl needs (version 2): the validators of the last 200
	// (sent back as If-None-Match and If-Modified-Since), the SHA-1 of
	// its payload, and the decayed counts of visits, visits that found a
	// change, and the seconds they spanned (package recrawl's History).
	ETag, LastModified    string
	Digest                [sha1.Size]byte
	Visits, Changes, Span float64
	// What ranks it (version 3): the in-links counted when it was last
	// scheduled, and what a sitemap said of it: InSitemap, and when it is
	// set its <priority> (-1 if none) and its <lastmod> (zero if none).
	InLinks         int
	InSitemap       bool
	SitemapPriority float64
	SitemapLastMod  time.Time
	// Unchanged (version 4) is the visits in a row, up to the last, that
	// found no change (package recrawl's History.Unchanged, which backs
	// off a page that keeps not changing); 0 in an older record.
	Unchanged int
	// Dating (version 5) is what its Last-Modified dates taught; zero in
	// an older record.
	Dating
	// Errors (version 6) is the visits in a row, up to the last, that got
	// an error status or no answer (package recrawl's History.Errors,
	// which backs off a URL that keeps failing); 0 in an older record.
	Errors int
	// Rank (version 7) is the rank it was queued with (package
	// importance), its operator's boost included: when it was admitted,
	// or, once a lease of it is done, that lease's. A copy queued again
	// as its estimate rose does not rewrite it: the lease of the URL may
	// be ending at that moment, and its record is that lease's to write.
	// 0 in an older record, and for a seed.
	Rank uint32
	// TextHash (version 8) is the hash of the visible words and links
	// of the last 200 read whole as a page (extract.TextHash, AddLinks): a
	// visit whose payload differs but whose text does not (a form's token,
	// a script's nonce, a time in a comment) found no change. 0 when
	// there was no text, the page was read in part or is rendered, and in
	// an older record.
	TextHash uint64
}

// Dating is what a page's Last-Modified dates taught of its changes
// (package recrawl's Dating): decayed counts of the changes they dated and
// of the seconds the page is known to have gone without one, the last
// date, and whether the dates proved not to follow the content.
type Dating struct {
	Dated, Exposed float64
	Modified       time.Time
	Undated        bool
}

func appendDating(dst []byte, g *Dating) []byte {
	dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(g.Dated))
	dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(g.Exposed))
	dst = appendTime(dst, g.Modified)
	undated := byte(0)
	if g.Undated {
		undated = 1
	}
	return append(dst, undated)
}

func (d *decoder) dating() Dating {
	g := Dating{Dated: d.float("dated"), Exposed: d.float("exposed"), Modified: d.time("modified")}
	switch d.byte1("undated") {
	case 0:
	case 1:
		g.Undated = true
	default:
		d.fail("undated")
	}
	return g
}

// Encoding helpers.

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendBytes(dst []byte, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// appendTime appends t as Unix nanoseconds; the zero time is 0 (and so is
// the instant of the Unix epoch, which reads back as the zero time).
func appendTime(dst []byte, t time.Time) []byte {
	if t.IsZero() {
		return binary.AppendVarint(dst, 0)
	}
	return binary.AppendVarint(dst, t.UnixNano())
}

func appendHostRecord(dst []byte, r *HostRecord) []byte {
	dst = append(dst, hostVersion)
	dst = appendTime(dst, r.NextAt)
	dst = binary.AppendVarint(dst, int64(r.CrawlDelay))
	dst = binary.AppendVarint(dst, int64(r.ErrorStreak))
	dst = binary.AppendVarint(dst, r.Accepted)
	dst = binary.AppendVarint(dst, int64(r.Backoff))
	dst = binary.AppendVarint(dst, int64(r.Errors))
	dst = binary.AppendVarint(dst, int64(r.Parks))
	gaveUp := byte(0)
	if r.GaveUp {
		gaveUp = 1
	}
	dst = append(dst, gaveUp)
	dst = binary.AppendVarint(dst, int64(r.Throttles))
	dst = appendTime(dst, r.ThrottledSince)
	dst = append(dst, r.Wait)
	return appendString(dst, r.WaitCause)
}

func appendURLRecord(dst []byte, r *URLRecord) []byte {
	dst = append(dst, urlVersion)
	dst = appendString(dst, r.URL)
	dst = binary.AppendVarint(dst, int64(r.Depth))
	dst = append(dst, r.Priority, byte(r.Status))
	dst = binary.AppendVarint(dst, int64(r.LastStatus))
	dst = appendString(dst, r.LastOutcome)
	dst = appendTime(dst, r.LastFetch)
	dst = appendTime(dst, r.NextCrawl)
	dst = appendString(dst, r.ETag)
	dst = appendString(dst, r.LastModified)
	dst = append(dst, r.Digest[:]...)
	for _, f := range [...]float64{r.Visits, r.Changes, r.Span} {
		dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(f))
	}
	dst = binary.AppendUvarint(dst, uint64(max(r.InLinks, 0)))
	inSitemap := byte(0)
	if r.InSitemap {
		inSitemap = 1
	}
	dst = append(dst, inSitemap)
	dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(r.SitemapPriority))
	dst = appendTime(dst, r.SitemapLastMod)
	dst = binary.AppendUvarint(dst, uint64(max(r.Unchanged, 0)))
	dst = appendDating(dst, &r.Dating)
	dst = binary.AppendUvarint(dst, uint64(max(r.Errors, 0)))
	dst = binary.AppendUvarint(dst, uint64(r.Rank))
	return binary.AppendUvarint(dst, r.TextHash)
}

// appendItem encodes a queue item; a front item also carries its host and
// partition.
func appendItem(dst []byte, it *QueueItem, front bool) []byte {
	if front {
		dst = append(dst, frontVersion)
	} else {
		dst = append(dst, queueVersion)
	}
	dst = appendString(dst, it.URL)
	if front {
		dst = appendString(dst, it.Host)
		dst = binary.AppendUvarint(dst, uint64(it.Part))
	}
	dst = binary.AppendVarint(dst, int64(it.Depth))
	dst = binary.AppendVarint(dst, int64(it.Hops))
	dst = append(dst, it.Priority)
	dst = appendString(dst, it.Via)
	dst = appendTime(dst, it.Added)
	dst = appendString(dst, it.Fetch)
	var flags byte
	if it.Requisite {
		flags |= itemRequisite
	}
	if it.Sitemap {
		flags |= itemSitemap
	}
	if it.Again {
		flags |= itemAgain
	}
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(it.Rank))
	dst = binary.AppendUvarint(dst, uint64(it.Seed))
	return appendString(dst, it.Path)
}

// Flags of a queue item (version 3 on).
const (
	itemRequisite = 1 << iota
	itemSitemap
	itemAgain
)

// decoder reads a value, remembering the first error; after one, every read
// returns a zero value. Strings are cut from one copy of the whole value, so
// a record costs one allocation for all its strings.
type decoder struct {
	b   []byte
	s   string // b as a string, made on the first string read
	off int
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("bad %s at byte %d of %d", what, d.off, len(d.b))
	}
}

func (d *decoder) version(max byte) byte {
	if len(d.b) == 0 {
		d.err = errors.New("empty value")
		return 0
	}
	v := d.b[0]
	switch {
	case v == 0:
		d.err = errors.New("version 0 is invalid")
	case v > max:
		d.err = fmt.Errorf("version %d (this build reads up to %d): %w", v, max, ErrNewerVersion)
	}
	d.off = 1
	return v
}

func (d *decoder) byte1(what string) byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.b) {
		d.fail(what)
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) varint(what string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.off += n
	return v
}

// int reads a varint into an int.
func (d *decoder) int(what string) int { return int(d.varint(what)) }

// span reads a uvarint length and returns the offsets of that many bytes.
func (d *decoder) span(what string) (start, end int) {
	if d.err != nil {
		return 0, 0
	}
	n, w := binary.Uvarint(d.b[d.off:])
	if w <= 0 || n > uint64(len(d.b)-d.off-w) {
		d.fail(what + " length")
		return 0, 0
	}
	d.off += w
	start = d.off
	d.off += int(n)
	return start, d.off
}

// raw returns the next length-prefixed bytes, aliasing the value.
func (d *decoder) raw(what string) []byte {
	start, end := d.span(what)
	return d.b[start:end]
}

func (d *decoder) str(what string) string {
	start, end := d.span(what)
	if start == end {
		return ""
	}
	if d.s == "" {
		d.s = string(d.b)
	}
	return d.s[start:end]
}

// float reads a float64, big-endian IEEE 754 bits.
func (d *decoder) float(what string) float64 { return math.Float64frombits(d.uint64be(what)) }

// uint64be reads eight bytes, big-endian.
func (d *decoder) uint64be(what string) uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.b)-d.off < 8 {
		d.fail(what)
		return 0
	}
	v := binary.BigEndian.Uint64(d.b[d.off:])
	d.off += 8
	return v
}

func (d *decoder) time(what string) time.Time {
	n := d.varint(what)
	if n == 0 || d.err != nil {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// finish reports trailing bytes (a value longer than its version's layout
// is as corrupt as a shorter one) and names the key in any error.
func (d *decoder) finish(key []byte) error {
	if d.err == nil && d.off != len(d.b) {
		d.err = fmt.Errorf("%d trailing bytes", len(d.b)-d.off)
	}
	if d.err != nil {
		return fmt.Errorf("decode %s: %w", fmtKey(key), d.err)
	}
	return nil
}

// decodeHostRecord decodes the value of a host key; the host comes from
// the key.
func decodeHostRecord(key, val []byte) (HostRecord, error) {
	hk, err := parseHostKey(key)
	if err != nil {
		return HostRecord{}, err
	}
	if hk.tag != tagHost || len(hk.rest) != 0 {
		return HostRecord{}, fmt.Errorf("decode %s: not a host key", fmtKey(key))
	}
	d := decoder{b: val}
	var r HostRecord
	v := d.version(hostVersion)
	r.Host = hk.host
	r.NextAt = d.time("next-at")
	r.CrawlDelay = time.Duration(d.varint("crawl delay"))
	r.ErrorStreak = d.int("error streak")
	r.Accepted = d.varint("accepted")
	if v < 3 { // robots.txt fields, now in RobotsRecord: read past them
		d.time("robots fetched-at")
		d.int("robots status")
		d.byte1("robots outcome")
		d.str("robots error")
		d.raw("robots body")
	}
	if v >= 2 {
		r.Backoff = time.Duration(d.varint("backoff"))
		r.Errors = d.int("errors")
		r.Parks = d.int("parks")
		switch d.byte1("given up") {
		case 0:
		case 1:
			r.GaveUp = true
		default:
			d.fail("given up")
		}
	}
	if v >= 4 {
		r.Throttles = d.int("429s in a row")
		r.ThrottledSince = d.time("429s since")
	}
	if v >= 5 {
		r.Wait = d.byte1("wait")
		r.WaitCause = d.str("wait cause")
	}
	if err := d.finish(key); err != nil {
		return HostRecord{}, err
	}
	return r, nil
}

func appendRobotsRecord(dst []byte, r *RobotsRecord) []byte {
	dst = append(dst, robotsVersion)
	dst = appendTime(dst, r.FetchedAt)
	dst = binary.AppendVarint(dst, int64(r.Status))
	dst = append(dst, r.Outcome)
	dst = appendString(dst, r.Err)
	dst = appendBytes(dst, r.Body)
	dst = binary.AppendVarint(dst, int64(r.Failures))
	dst = appendTime(dst, r.FailingSince)
	dst = appendTime(dst, r.LastFailure)
	return binary.AppendVarint(dst, int64(r.FailStatus))
}

// robotsV1Failed is the Outcome a version 1 record gave a failed fetch (the
// robots package's DisallowAll).
const robotsV1Failed = 3

func decodeRobotsRecord(key, val []byte) (RobotsRecord, error) {
	hk, err := parseHostKey(key)
	if err != nil {
		return RobotsRecord{}, err
	}
	if hk.tag != tagRobot {
		return RobotsRecord{}, fmt.Errorf("decode %s: not a robots key", fmtKey(key))
	}
	d := decoder{b: val}
	r := RobotsRecord{Host: hk.host, Scheme: string(hk.rest)}
	v := d.version(robotsVersion)
	r.FetchedAt = d.time("fetched-at")
	r.Status = d.int("status")
	r.Outcome = d.byte1("outcome")
	r.Err = d.str("error")
	if body := d.raw("body"); len(body) > 0 {
		if len(body) > MaxRobotsBody {
			d.fail("body length")
		}
		r.Body = append([]byte(nil), body...)
	}
	if v >= 2 {
		r.Failures = d.int("failures")
		r.FailingSince = d.time("failing-since")
		r.LastFailure = d.time("last-failure")
		r.FailStatus = d.int("fail-status")
	} else if r.Outcome == robotsV1Failed {
		// Version 1 kept one answer; a failure was it. It becomes one
		// failure, and the answer a good one no longer.
		r.Failures, r.FailingSince, r.LastFailure, r.FailStatus = 1, r.FetchedAt, r.FetchedAt, r.Status
		r.FetchedAt, r.Status, r.Outcome = time.Time{}, 0, 0
	}
	if err := d.finish(key); err != nil {
		return RobotsRecord{}, err
	}
	return r, nil
}

func decodeURLRecord(key, val []byte) (URLRecord, error) {
	d := decoder{b: val}
	var r URLRecord
	v := d.version(urlVersion)
	r.URL = d.str("url")
	r.Depth = d.int("depth")
	r.Priority = d.byte1("priority")
	r.Status = URLStatus(d.byte1("status"))
	if d.err == nil && (r.Status < URLQueued || r.Status > URLRejected) {
		d.fail("status")
	}
	r.LastStatus = d.int("last status")
	r.LastOutcome = d.str("last outcome")
	r.LastFetch = d.time("last fetch")
	r.NextCrawl = d.time("next crawl")
	if v >= 2 {
		r.ETag = d.str("etag")
		r.LastModified = d.str("last-modified")
		if d.err == nil && len(d.b)-d.off >= sha1.Size {
			copy(r.Digest[:], d.b[d.off:])
			d.off += sha1.Size
		} else {
			d.fail("digest")
		}
		for _, f := range []*float64{&r.Visits, &r.Changes, &r.Span} {
			if d.err == nil && len(d.b)-d.off >= 8 {
				*f = math.Float64frombits(binary.BigEndian.Uint64(d.b[d.off:]))
				d.off += 8
			} else {
				d.fail("history")
			}
		}
	}
	r.SitemapPriority = -1
	if v >= 3 {
		r.InLinks = int(min(d.uvarint("in-links"), math.MaxInt32))
		switch d.byte1("in sitemap") {
		case 0:
		case 1:
			r.InSitemap = true
		default:
			d.fail("in sitemap")
		}
		if d.err == nil && len(d.b)-d.off >= 8 {
			r.SitemapPriority = math.Float64frombits(binary.BigEndian.Uint64(d.b[d.off:]))
			d.off += 8
		} else {
			d.fail("sitemap priority")
		}
		r.SitemapLastMod = d.time("sitemap lastmod")
	}
	if v >= 4 {
		r.Unchanged = int(min(d.uvarint("unchanged"), math.MaxInt32))
	}
	if v >= 5 {
		r.Dating = d.dating()
	}
	if v >= 6 {
		r.Errors = int(min(d.uvarint("errors"), math.MaxInt32))
	}
	if v >= 7 {
		r.Rank = uint32(min(d.uvarint("rank"), math.MaxUint32))
	}
	if v >= 8 {
		r.TextHash = d.uvarint("text hash")
	}
	if err := d.finish(key); err != nil {
		return URLRecord{}, err
	}
	return r, nil
}

// decodeFrontItem decodes a front-queue value.
func decodeFrontItem(key, val []byte) (QueueItem, error) {
	d := decoder{b: val}
	var it QueueItem
	v := d.version(frontVersion)
	it.URL = d.str("url")
	it.Host = d.str("host")
	if p := d.uvarint("partition"); p > 0xffff {
		d.fail("partition")
	} else {
		it.Part = uint16(p)
	}
	decodeItemTail(&d, &it, v)
	if d.err == nil && checkHost(it.Host) != nil {
		d.err = fmt.Errorf("invalid host %q", it.Host)
	}
	if err := d.finish(key); err != nil {
		return QueueItem{}, err
	}
	return it, nil
}

// decodeQueueItem decodes a back-queue value of the given host.
func decodeQueueItem(key, val []byte, part uint16, host string) (QueueItem, error) {
	d := decoder{b: val}
	it := QueueItem{Host: host, Part: part}
	v := d.version(queueVersion)
	it.URL = d.str("url")
	decodeItemTail(&d, &it, v)
	if err := d.finish(key); err != nil {
		return QueueItem{}, err
	}
	return it, nil
}

func decodeItemTail(d *decoder, it *QueueItem, version byte) {
	it.Depth = d.int("depth")
	it.Hops = d.int("hops")
	it.Priority = d.byte1("priority")
	it.Via = d.str("via")
	it.Added = d.time("added")
	if version >= 2 {
		it.Fetch = d.str("fetch")
	}
	if version >= 3 {
		flags := d.byte1("flags")
		it.Requisite = flags&itemRequisite != 0
		it.Sitemap = flags&itemSitemap != 0
		it.Again = flags&itemAgain != 0
	}
	if version >= 4 {
		it.Rank = uint32(min(d.uvarint("rank"), math.MaxUint32))
	}
	if version >= 5 {
		if s := d.uvarint("seed"); s > math.MaxUint32 {
			d.fail("seed")
		} else {
			it.Seed = uint32(s)
		}
	}
	if version >= 6 {
		it.Path = d.str("path")
	}
}
