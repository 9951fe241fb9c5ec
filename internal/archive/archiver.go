// Package archive keeps what a crawl fetched: it writes each response to
// the WARC files (a payload already archived as a revisit of its first
// capture), keeps the capture index and the payload digests, delivers each
// capture's event to the page sinks once it is durable (Outbox), moves
// finished WARC files to an object store (Uploader), and reads the
// archive back for weft cdx, get and wacz (Reader). The captures of
// earlier crawls are imported as digest records too (ImportDigests), so
// that a payload they hold is a revisit of theirs.
package archive

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"fmt"
	"mime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/events"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/warc"
)

// Capture is where a response went in the archive.
type Capture struct {
	Loc      warc.Location
	Digest   [sha1.Size]byte
	Revisit  bool               // a revisit record: the payload is an earlier capture's
	First    store.DigestRecord // of a revisit: the capture it refers to
	Original bool               // the first capture of a dedupable payload, its digest recorded in the batch
	// Key and Rec are its line of the capture index (see Index), which
	// the page's reading may add to before it is written.
	Key string
	Rec store.CaptureRecord
	// Fields are what extensions extracted from it, for its event.
	Fields map[string]any
}

// RefersTo is the URL of the capture a revisit refers to, "" for another.
func (c Capture) RefersTo() string {
	if c.Revisit {
		return c.First.URL
	}
	return ""
}

// Staging is what a page's batch holds for the archive: the store batch
// its capture's line and payload digest go in, the digests it records
// (pending until it commits: Settle), and the events of its captures, for
// the sinks once it has.
type Staging struct {
	Batch   *store.Batch
	Digests [][sha1.Size]byte
	Events  []events.Event
	// captured are the URLs of the captures it indexes, pending until it
	// commits (PendingCapture).
	captured []string
}

// Counts are what the archiver counted.
type Counts struct {
	Revisits     int64 // responses whose payload was archived before: revisit records
	RevisitBytes int64 // their payload bytes, not stored again
	NotModified  int64 // 304s archived as server-not-modified revisits
	Rendered     int64 // exchanges archived as parsed, not as sent
	// Of Revisits and RevisitBytes, those of a capture of an earlier
	// crawl (ImportDigests).
	EarlierRevisits, EarlierRevisitBytes int64
}

// Archiver writes responses to the WARC files and keeps the capture index
// and the payload digests that make a copy a revisit record: it owns the
// digests pending in batches not yet committed, and what the recovery of
// torn WARC files at start cut away. It is safe for concurrent use.
type Archiver struct {
	w     Writer
	db    *store.DB
	canon *canon.Canonicalizer
	out   *Outbox // the page events of the captures indexed alone

	digests digestShards         // one payload digest looked up and recorded at a time
	warcFix []warc.RecoveredFile // what warc.Recover cut back at start
	// pending holds the captures of batches not committed yet, when
	// recall is set (PendingCapture).
	pending pendingCaptures
	recall  bool

	revisits, revisitBytes, notModified, asParsed atomic.Int64
	earlierRevisits, earlierRevisitBytes          atomic.Int64
	// sha256 is set when digests keyed by SHA-256 were imported from an
	// earlier crawl: a new payload is looked up by its SHA-256 too.
	sha256 atomic.Bool
}

// New returns an Archiver writing to w, keeping its index in db, and
// handing the events of captures it indexes alone to out. recovered is
// what warc.Recover cut back at start: a digest naming a record it cut is
// not a capture to refer to. With recall, the captures of batches not
// committed yet are kept where PendingCapture finds them (a crawl that
// renders answers its browsers from them).
func New(w Writer, db *store.DB, cc *canon.Canonicalizer, out *Outbox, recovered []warc.RecoveredFile, recall bool) *Archiver {
	a := &Archiver{w: w, db: db, canon: cc, out: out, warcFix: recovered, recall: recall}
	a.checkSHA256()
	return a
}

// checkSHA256 looks SHA-256 digests up from now on if an import recorded
// some (ImportDigests, before or since New).
func (a *Archiver) checkSHA256() {
	if _, ok, err := a.db.GetMeta(metaDedupSHA256); err == nil && ok {
		a.sha256.Store(true)
	}
}

// Import imports the payload digests of an earlier crawl (ImportDigests)
// for this archiver to refer to.
func (a *Archiver) Import(ctx context.Context, src string) (Imported, error) {
	im, err := ImportDigests(ctx, a.db, src)
	if err == nil {
		a.checkSHA256()
	}
	return im, err
}

// Recovered is what warc.Recover cut back at start.
func (a *Archiver) Recovered() []warc.RecoveredFile { return a.warcFix }

// Counts returns what the archiver counted so far.
func (a *Archiver) Counts() Counts {
	return Counts{Revisits: a.revisits.Load(), RevisitBytes: a.revisitBytes.Load(), NotModified: a.notModified.Load(), Rendered: a.asParsed.Load(),
		EarlierRevisits: a.earlierRevisits.Load(), EarlierRevisitBytes: a.earlierRevisitBytes.Load()}
}

// digestShards serialise the look-up-then-record of one payload digest, so
// that two workers archiving the same new payload at once write it once.
//
// A new payload's digest record goes to disk in its page's batch, with the
// links found in it: were it written first, a crash before the batch would
// leave the page queued, fetched again after the restart, found by its
// digest and taken for a revisit, and its links would never be followed.
// Until that batch commits, the record waits in pending, where other
// workers find it.
type digestShards [64]digestShard

type digestShard struct {
	mu      sync.Mutex
	pending map[[sha1.Size]byte]store.DigestRecord
}

func (d *digestShards) shard(sum [sha1.Size]byte) *digestShard {
	return &d[sum[0]%uint8(len(d))]
}

// settle forgets the pending records of a batch that has committed (or
// failed, which stops the crawl).
func (d *digestShards) settle(sums [][sha1.Size]byte) {
	for _, sum := range sums {
		sh := d.shard(sum)
		sh.mu.Lock()
		delete(sh.pending, sum)
		sh.mu.Unlock()
	}
}

// Settle forgets the pending digests and captures of a batch that has
// committed (or failed, which stops the crawl).
func (a *Archiver) Settle(st *Staging) {
	a.digests.settle(st.Digests)
	a.pending.forget(st)
}

// PendingDigest returns the first capture of a payload whose batch has
// not committed yet.
func (a *Archiver) PendingDigest(sum [sha1.Size]byte) (store.DigestRecord, bool) {
	sh := a.digests.shard(sum)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	r, ok := sh.pending[sum]
	return r, ok
}

// PendingCapture returns the capture of url in a batch not committed yet,
// with recall set.
func (a *Archiver) PendingCapture(url string) (store.CaptureRecord, bool) { return a.pending.get(url) }

// Dedupable reports whether a response's payload is worth remembering by
// digest: a whole, non-empty 2xx body. An error page or a body cut short
// says nothing about the content a later capture may share.
func Dedupable(resp *fetch.Response) bool {
	return resp.StatusCode >= 200 && resp.StatusCode < 300 && resp.Truncated == "" && len(resp.Body) > 0
}

// exchange is resp's request and response header blocks as they crossed
// the connection, with the time, address and protocols of the exchange.
func (a *Archiver) exchange(resp *fetch.Response) warc.Exchange {
	ip := resp.RemoteAddr
	if i := strings.LastIndexByte(ip, ':'); i > 0 {
		ip = strings.Trim(ip[:i], "[]")
	}
	ex := warc.Exchange{
		URL: resp.URL, Date: resp.Start, IP: ip,
		RequestHeader: resp.RequestHeader, ResponseHeader: resp.ResponseHeader,
		Protocols: []string{resp.Protocol}, CipherSuite: resp.CipherSuite,
	}
	if resp.TLS != "" {
		ex.Protocols = append(ex.Protocols, resp.TLS)
	}
	if resp.CertificateError != nil {
		ex.CertificateError = resp.CertificateError.Error()
	}
	return ex
}

// rendered is ex in the form net/http parsed it (fetch.Response.Rendered),
// for bytes that came which a WARC record cannot hold as they are (a
// header block that readers would split early): archived so, and
// counted, rather than lost.
func (a *Archiver) rendered(ex warc.Exchange, resp *fetch.Response) warc.Exchange {
	ex.RequestHeader, ex.ResponseHeader = resp.Rendered()
	ex.WireBody = nil
	a.asParsed.Add(1)
	return ex
}

// Archive writes resp to the WARC files and returns its capture, for the
// caller to index (in st, the page's batch; nil for a capture of its own). A dedupable payload already archived, under this URL or
// another, is written as a revisit record that refers to its first
// capture, not as a second copy; a new one is remembered by its digest
// before any other worker can look it up.
func (a *Archiver) Archive(resp *fetch.Response, st *Staging, u *canon.URL) (Capture, error) {
	ex := a.exchange(resp)
	ex.Payload, ex.WireBody, ex.Truncated = resp.Body, resp.WireBody, resp.Truncated
	if warc.CheckExchange(&ex) != nil && resp.Protocol != "h2" {
		ex = a.rendered(ex, resp)
	}
	cp := Capture{Digest: sha1.Sum(resp.Body)}
	ex.PayloadSHA1 = &cp.Digest
	var err error
	if Dedupable(resp) {
		cp, err = a.archiveOnce(ex, cp, st)
	} else {
		cp.Loc, err = a.w.WriteExchange(ex)
	}
	if err != nil {
		// A crawl that cannot write its archive must not pretend to go on.
		return cp, fmt.Errorf("archive %s: %w", resp.URL, err)
	}
	if cp.Revisit {
		a.revisits.Add(1)
		a.revisitBytes.Add(int64(len(resp.Body)))
		if cp.First.Source != "" {
			a.earlierRevisits.Add(1)
			a.earlierRevisitBytes.Add(int64(len(resp.Body)))
		}
	}
	// The capture's key: the SURT of the URL requested (u's, when that is
	// the one; parsed again only when the request was for a variant).
	key := resp.URL
	if u != nil && u.String == resp.URL {
		key = u.SURT()
	} else if pu, perr := a.canon.Parse(resp.URL); perr == nil {
		key = pu.SURT()
	}
	cp.Key = key
	cp.Rec = store.CaptureRecord{
		URL: resp.URL, Date: resp.Start, Status: resp.StatusCode, MIME: MediaType(resp.Header.Get("Content-Type")),
		Digest: cp.Digest, File: cp.Loc.File, Offset: cp.Loc.Offset, Length: cp.Loc.Length,
	}
	if cp.Revisit {
		cp.Rec.Kind = store.CaptureRevisit
	}
	return cp, nil
}

// Index adds a capture to the capture index: through st, for the page
// sinks once its batch commits, or in a batch of its own when st is nil.
// A capture that was not archived (the crawl is stopping) has no line.
func (a *Archiver) Index(cp Capture, st *Staging) error {
	switch {
	case cp.Key == "":
	case st != nil:
		st.Batch.PutCapture(cp.Key, cp.Rec)
		if a.recall {
			a.pending.put(cp.Rec, st)
		}
		if a.out.Wanted() {
			st.Events = append(st.Events, eventOf(cp))
		}
	default:
		var evs []events.Event
		if a.out.Wanted() {
			evs = []events.Event{eventOf(cp)}
		}
		b := a.db.NewBatch()
		b.PutCapture(cp.Key, cp.Rec)
		names := a.out.Stage(b, evs)
		if err := b.Commit(false); err != nil {
			return fmt.Errorf("index the capture of %s: %w", cp.Rec.URL, err)
		}
		return a.out.Deliver(evs, names)
	}
	return nil
}

// archiveOnce writes ex as a response record if its payload is new, and
// records its digest (in pb, or at once when pb is nil); else as a revisit
// of the first capture.
func (a *Archiver) archiveOnce(ex warc.Exchange, cp Capture, st *Staging) (Capture, error) {
	sh := a.digests.shard(cp.Digest)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	first, pending := sh.pending[cp.Digest]
	ok := pending
	if !ok {
		var err error
		if first, ok, err = a.db.GetDigest(cp.Digest); err != nil {
			return cp, err
		}
		if !ok && a.sha256.Load() {
			// An earlier crawl's index gave SHA-256 digests.
			if first, ok, err = a.db.GetDigestSHA256(sha256.Sum256(ex.Payload)); err != nil {
				return cp, err
			}
		}
		ok = ok && a.StillArchived(first)
	}
	if ok {
		ex.Revisit = &warc.Revisit{RefersToURI: first.URL, RefersToDate: first.Date, RefersTo: first.RecordID}
		cp.Revisit, cp.First = true, first
		if pending && st != nil {
			// The first capture's batch may yet be lost to a crash, and
			// this revisit must not be left referring to nothing: this
			// batch records the first capture too (its WARC record is
			// written already).
			st.Batch.PutDigest(cp.Digest, first)
		}
		var err error
		cp.Loc, err = a.w.WriteExchange(ex)
		return cp, err
	}
	var err error
	if cp.Loc, err = a.w.WriteExchange(ex); err != nil {
		return cp, err
	}
	rec := store.DigestRecord{URL: ex.URL, Date: ex.Date, File: cp.Loc.File, Offset: cp.Loc.Offset, Length: cp.Loc.Length, RecordID: cp.Loc.RecordID}
	if st == nil {
		// At once: another worker may look it up next.
		b := a.db.NewBatch()
		b.PutDigest(cp.Digest, rec)
		return cp, b.Commit(false)
	}
	st.Batch.PutDigest(cp.Digest, rec)
	st.Digests = append(st.Digests, cp.Digest)
	if sh.pending == nil {
		sh.pending = map[[sha1.Size]byte]store.DigestRecord{}
	}
	sh.pending[cp.Digest] = rec
	cp.Original, cp.First = true, rec
	return cp, nil
}

// StillArchived reports whether the record a digest names survived the
// recovery of torn WARC files at start. After a power loss the store may
// hold a digest record whose WARC tail was never on disk: a copy of that
// payload must then be archived whole again, not as a revisit of nothing.
func (a *Archiver) StillArchived(first store.DigestRecord) bool {
	if first.Source != "" {
		// In another crawl's files, which this crawl's recovery did not touch.
		return true
	}
	for _, f := range a.warcFix {
		if f.Name == first.File {
			return !f.Removed && first.Offset+first.Length <= f.KeptBytes
		}
	}
	return true
}

// Followed records that the original capture cp was parsed and its links
// followed at depth, so that later copies of its payload at that depth or
// deeper are not parsed again. A payload with nothing to follow (an image,
// a page without links) is recorded at depth 0: no copy of it, however
// shallow, can find more. (A copy read because it came shallower leaves
// the record as it is: a copy on another host resolves its relative links
// to other URLs, and the depth of the first reading is the rule's.)
func (a *Archiver) Followed(st *Staging, cp Capture, depth int, nothingToFollow bool) {
	if !cp.Original {
		return
	}
	if nothingToFollow {
		depth = 0
	}
	rec := cp.First
	rec.Followed, rec.Depth = true, depth
	sh := a.digests.shard(cp.Digest)
	sh.mu.Lock()
	if _, ok := sh.pending[cp.Digest]; ok {
		sh.pending[cp.Digest] = rec
	}
	sh.mu.Unlock()
	st.Batch.PutDigest(cp.Digest, rec)
}

// Outlinks writes a WARC metadata record about a parsed page, as Heritrix
// does: where it was found (via), how deep, how long it took, and every
// outlink found in it.
func (a *Archiver) Outlinks(resp *fetch.Response, recordID, via string, depth int, outlinks []string) error {
	fields := make([][2]string, 0, len(outlinks)+3)
	if via != "" {
		fields = append(fields, [2]string{"via", via})
	}
	fields = append(fields, [2]string{"hopsFromSeed", strconv.Itoa(depth)}, [2]string{"fetchTimeMs", strconv.FormatInt(resp.Duration.Milliseconds(), 10)})
	for _, o := range outlinks {
		fields = append(fields, [2]string{"outlink", o})
	}
	if _, err := a.w.WriteMetadata(warc.Metadata{URL: resp.URL, Date: resp.Start, ConcurrentTo: recordID, Fields: fields}); err != nil {
		return fmt.Errorf("archive the outlinks of %s: %w", resp.URL, err)
	}
	return nil
}

// SkipLinks reports whether a revisit's links need not be extracted: the
// capture it refers to was parsed, its links followed, at this depth or
// shallower. Otherwise (the first copy was a robots.txt, a nofollow page,
// or deeper) the revisit is parsed as a page of its own.
func (cp Capture) SkipLinks(depth int) bool {
	return cp.Revisit && cp.First.Followed && cp.First.Depth <= depth
}

// InheritTitle gives a revisit that was not read again the title of the
// latest capture of its payload at the URL it refers to, as pages.jsonl does
// (Pages): a 304, or a copy whose links were followed already, is not
// parsed, but its page event and its page in the API should name it as
// the first did. A capture of an earlier crawl, or one whose batch has not
// committed yet, lends none.
func (a *Archiver) InheritTitle(cp *Capture) error {
	if !cp.Revisit || cp.Rec.Title != "" || cp.First.Source != "" || cp.First.URL == "" {
		return nil
	}
	u, err := a.canon.Parse(cp.First.URL)
	if err != nil {
		return nil
	}
	if err := a.db.CapturesNewestFirst(u.SURT(), func(r store.CaptureRecord) bool {
		if r.Digest == cp.Digest && r.Title != "" {
			cp.Rec.Title = r.Title
			return false
		}
		return true
	}); err != nil {
		return fmt.Errorf("archive: the title of %s: %w", cp.First.URL, err)
	}
	return nil
}

// MediaType is the media type of a Content-Type value, lower-case, without
// parameters; "" if there is none.
func MediaType(ct string) string {
	if ct == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt
}

// NotModified writes a 304 as a server-not-modified revisit of first, the
// capture that holds the payload the URL last had, whose digest is digest.
func (a *Archiver) NotModified(resp *fetch.Response, digest [sha1.Size]byte, first store.DigestRecord, u *canon.URL) (Capture, error) {
	ex := a.exchange(resp)
	ex.PayloadSHA1 = &digest
	ex.Revisit = &warc.Revisit{RefersToURI: first.URL, RefersToDate: first.Date, RefersTo: first.RecordID,
		Profile: warc.ProfileServerNotModified}
	if warc.CheckExchange(&ex) != nil && resp.Protocol != "h2" {
		ex = a.rendered(ex, resp)
	}
	cp := Capture{Digest: digest, Revisit: true, First: first}
	var err error
	if cp.Loc, err = a.w.WriteExchange(ex); err != nil {
		return cp, fmt.Errorf("archive %s: %w", resp.URL, err)
	}
	a.notModified.Add(1)
	cp.Key = u.SURT()
	cp.Rec = store.CaptureRecord{
		URL: resp.URL, Date: resp.Start, Status: resp.StatusCode, MIME: MediaType(resp.Header.Get("Content-Type")),
		Digest: digest, File: cp.Loc.File, Offset: cp.Loc.Offset, Length: cp.Loc.Length, Kind: store.CaptureRevisit,
	}
	return cp, nil
}
