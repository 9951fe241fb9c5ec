package crawl

import (
	"crypto/sha1"
	"fmt"
	"mime"
	"strconv"
	"strings"
	"sync"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/events"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/warc"
)

// capture is where a response went in the archive.
type capture struct {
	loc      warc.Location
	digest   [sha1.Size]byte
	revisit  bool               // a revisit record: the payload is an earlier capture's
	first    store.DigestRecord // of a revisit: the capture it refers to
	original bool               // the first capture of a dedupable payload, its digest recorded in the batch
	// key and rec are its line of the capture index (see index), which
	// the page's reading may add to before it is written.
	key string
	rec store.CaptureRecord
	// fields are what extensions extracted from it, for its event.
	fields map[string]any
}

// archiver writes responses to the WARC files and keeps the capture index
// and the payload digests that make a copy a revisit record: it owns the
// digests pending in batches not yet committed, and what the recovery of
// torn WARC files at start cut away.
type archiver struct {
	w     ArchiveWriter
	state *durable
	canon *canon.Canonicalizer
	out   *outbox // the page events of the captures indexed alone
	stats *counters
	fail  func(error) // the crawl's: an archive that cannot be written stops it

	digests digestShards         // one payload digest looked up and recorded at a time
	warcFix []warc.RecoveredFile // what warc.Recover cut back at start
	// pending holds the captures of batches not committed yet, when
	// recall is set (a crawl that renders: recall.go).
	pending pendingCaptures
	recall  bool
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

// settle forgets the pending digests and captures of a batch that has
// committed (or failed, which stops the crawl).
func (a *archiver) settle(pb *pageBatch) {
	a.digests.settle(pb.digests)
	a.pending.forget(pb)
}

// pendingDigest returns the first capture of a payload whose batch has
// not committed yet.
func (a *archiver) pendingDigest(sum [sha1.Size]byte) (store.DigestRecord, bool) {
	sh := a.digests.shard(sum)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	r, ok := sh.pending[sum]
	return r, ok
}

// dedupable reports whether a response's payload is worth remembering by
// digest: a whole, non-empty 2xx body. An error page or a body cut short
// says nothing about the content a later capture may share.
func dedupable(resp *fetch.Response) bool {
	return resp.StatusCode >= 200 && resp.StatusCode < 300 && resp.Truncated == "" && len(resp.Body) > 0
}

// exchange is resp's request and response header blocks as they crossed
// the connection, with the time, address and protocols of the exchange.
func (a *archiver) exchange(resp *fetch.Response) warc.Exchange {
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
func (a *archiver) rendered(ex warc.Exchange, resp *fetch.Response) warc.Exchange {
	ex.RequestHeader, ex.ResponseHeader = resp.Rendered()
	ex.WireBody = nil
	a.stats.rendered.Add(1)
	return ex
}

// archive writes resp to the WARC files and returns its capture, for the
// caller to index. A dedupable payload already archived, under this URL or
// another, is written as a revisit record that refers to its first
// capture, not as a second copy; a new one is remembered by its digest
// before any other worker can look it up.
func (a *archiver) archive(resp *fetch.Response, pb *pageBatch, u *canon.URL) capture {
	ex := a.exchange(resp)
	ex.Payload, ex.WireBody, ex.Truncated = resp.Body, resp.WireBody, resp.Truncated
	if warc.CheckExchange(&ex) != nil && resp.Protocol != "h2" {
		ex = a.rendered(ex, resp)
	}
	cp := capture{digest: sha1.Sum(resp.Body)}
	ex.PayloadSHA1 = &cp.digest
	var err error
	if dedupable(resp) {
		cp, err = a.archiveOnce(ex, cp, pb)
	} else {
		cp.loc, err = a.w.WriteExchange(ex)
	}
	if err != nil {
		// A crawl that cannot write its archive must not pretend to go on.
		a.fail(fmt.Errorf("crawl: archive %s: %w", resp.URL, err))
		return cp
	}
	if cp.revisit {
		a.stats.revisits.Add(1)
		a.stats.revisitBytes.Add(int64(len(resp.Body)))
	}
	// The capture's key: the SURT of the URL requested (u's, when that is
	// the one; parsed again only when the request was for a variant).
	key := resp.URL
	if u != nil && u.String == resp.URL {
		key = u.SURT()
	} else if pu, perr := a.canon.Parse(resp.URL); perr == nil {
		key = pu.SURT()
	}
	cp.key = key
	cp.rec = store.CaptureRecord{
		URL: resp.URL, Date: resp.Start, Status: resp.StatusCode, MIME: mimeType(resp.Header.Get("Content-Type")),
		Digest: cp.digest, File: cp.loc.File, Offset: cp.loc.Offset, Length: cp.loc.Length,
	}
	if cp.revisit {
		cp.rec.Kind = store.CaptureRevisit
	}
	return cp
}

// index adds a capture to the capture index: through pb, for the page
// sinks once pb commits, or in a batch of its own when pb is nil. A
// capture that was not archived (the crawl is stopping) has no line.
func (a *archiver) index(cp capture, pb *pageBatch) {
	switch {
	case cp.key == "":
	case pb != nil:
		pb.b.PutCapture(cp.key, cp.rec)
		if a.recall {
			a.pending.put(cp.rec, pb)
		}
		if a.out.wanted() {
			pb.events = append(pb.events, eventFields(eventOf(cp.rec), cp.fields))
		}
	default:
		var evs []events.Event
		if a.out.wanted() {
			evs = []events.Event{eventFields(eventOf(cp.rec), cp.fields)}
		}
		b := a.state.db.NewBatch()
		b.PutCapture(cp.key, cp.rec)
		outbox := a.out.stage(b, evs)
		if err := b.Commit(false); err != nil {
			a.fail(fmt.Errorf("crawl: index the capture of %s: %w", cp.rec.URL, err))
		} else {
			a.out.emit(evs, outbox)
		}
	}
}

// archiveOnce writes ex as a response record if its payload is new, and
// records its digest (in pb, or at once when pb is nil); else as a revisit
// of the first capture.
func (a *archiver) archiveOnce(ex warc.Exchange, cp capture, pb *pageBatch) (capture, error) {
	sh := a.digests.shard(cp.digest)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	first, pending := sh.pending[cp.digest]
	ok := pending
	if !ok {
		var err error
		if first, ok, err = a.state.db.GetDigest(cp.digest); err != nil {
			return cp, err
		}
		ok = ok && a.stillArchived(first)
	}
	if ok {
		ex.Revisit = &warc.Revisit{RefersToURI: first.URL, RefersToDate: first.Date, RefersTo: first.RecordID}
		cp.revisit, cp.first = true, first
		if pending && pb != nil {
			// The first capture's batch may yet be lost to a crash, and
			// this revisit must not be left referring to nothing: this
			// batch records the first capture too (its WARC record is
			// written already).
			pb.b.PutDigest(cp.digest, first)
		}
		var err error
		cp.loc, err = a.w.WriteExchange(ex)
		return cp, err
	}
	var err error
	if cp.loc, err = a.w.WriteExchange(ex); err != nil {
		return cp, err
	}
	rec := store.DigestRecord{URL: ex.URL, Date: ex.Date, File: cp.loc.File, Offset: cp.loc.Offset, Length: cp.loc.Length, RecordID: cp.loc.RecordID}
	if pb == nil {
		return cp, a.state.putDigest(cp.digest, rec)
	}
	pb.b.PutDigest(cp.digest, rec)
	pb.digests = append(pb.digests, cp.digest)
	if sh.pending == nil {
		sh.pending = map[[sha1.Size]byte]store.DigestRecord{}
	}
	sh.pending[cp.digest] = rec
	cp.original, cp.first = true, rec
	return cp, nil
}

// stillArchived reports whether the record a digest names survived the
// recovery of torn WARC files at start. After a power loss the store may
// hold a digest record whose WARC tail was never on disk: a copy of that
// payload must then be archived whole again, not as a revisit of nothing.
func (a *archiver) stillArchived(first store.DigestRecord) bool {
	for _, f := range a.warcFix {
		if f.Name == first.File {
			return !f.Removed && first.Offset+first.Length <= f.KeptBytes
		}
	}
	return true
}

// followed records that the original capture cp was parsed and its links
// followed at depth, so that later copies of its payload at that depth or
// deeper are not parsed again. A payload with nothing to follow (an image,
// a page without links) is recorded at depth 0: no copy of it, however
// shallow, can find more. (A copy read because it came shallower leaves
// the record as it is: a copy on another host resolves its relative links
// to other URLs, and the depth of the first reading is the rule's.)
func (a *archiver) followed(pb *pageBatch, cp capture, depth int, nothingToFollow bool) {
	if !cp.original {
		return
	}
	if nothingToFollow {
		depth = 0
	}
	rec := cp.first
	rec.Followed, rec.Depth = true, depth
	sh := a.digests.shard(cp.digest)
	sh.mu.Lock()
	if _, ok := sh.pending[cp.digest]; ok {
		sh.pending[cp.digest] = rec
	}
	sh.mu.Unlock()
	pb.b.PutDigest(cp.digest, rec)
}

// archiveOutlinks writes a WARC metadata record about a parsed page, as
// Heritrix does: where it was found, how deep, how long it took, and every
// outlink found in it.
func (a *archiver) archiveOutlinks(resp *fetch.Response, recordID string, l frontier.Lease, outlinks []string) {
	fields := make([][2]string, 0, len(outlinks)+3)
	if l.Via != "" {
		fields = append(fields, [2]string{"via", l.Via})
	}
	fields = append(fields, [2]string{"hopsFromSeed", strconv.Itoa(l.Depth)}, [2]string{"fetchTimeMs", strconv.FormatInt(resp.Duration.Milliseconds(), 10)})
	for _, o := range outlinks {
		fields = append(fields, [2]string{"outlink", o})
	}
	if _, err := a.w.WriteMetadata(warc.Metadata{URL: resp.URL, Date: resp.Start, ConcurrentTo: recordID, Fields: fields}); err != nil {
		a.fail(fmt.Errorf("crawl: archive the outlinks of %s: %w", resp.URL, err))
	}
}

// skipLinks reports whether a revisit's links need not be extracted: the
// capture it refers to was parsed, its links followed, at this depth or
// shallower. Otherwise (the first copy was a robots.txt, a nofollow page,
// or deeper) the revisit is parsed as a page of its own.
func (cp capture) skipLinks(depth int) bool {
	return cp.revisit && cp.first.Followed && cp.first.Depth <= depth
}

// mimeType is the media type of a Content-Type value, lower-case, without
// parameters; "" if there is none.
func mimeType(ct string) string {
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

// archiveNotModified writes a 304 as a server-not-modified revisit of
// first, the capture that holds the payload the URL last had.
func (a *archiver) archiveNotModified(resp *fetch.Response, prev store.URLRecord, first store.DigestRecord, u *canon.URL) capture {
	digest := prev.Digest
	ex := a.exchange(resp)
	ex.PayloadSHA1 = &digest
	ex.Revisit = &warc.Revisit{RefersToURI: first.URL, RefersToDate: first.Date, RefersTo: first.RecordID,
		Profile: warc.ProfileServerNotModified}
	if warc.CheckExchange(&ex) != nil && resp.Protocol != "h2" {
		ex = a.rendered(ex, resp)
	}
	cp := capture{digest: digest, revisit: true, first: first}
	var err error
	if cp.loc, err = a.w.WriteExchange(ex); err != nil {
		a.fail(fmt.Errorf("crawl: archive %s: %w", resp.URL, err))
		return cp
	}
	a.stats.notModified.Add(1)
	cp.key = u.SURT()
	cp.rec = store.CaptureRecord{
		URL: resp.URL, Date: resp.Start, Status: resp.StatusCode, MIME: mimeType(resp.Header.Get("Content-Type")),
		Digest: digest, File: cp.loc.File, Offset: cp.loc.Offset, Length: cp.loc.Length, Kind: store.CaptureRevisit,
	}
	return cp
}
