package synthweb

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Names of the first hostile hosts; HostileKindsAll gives the order in
// which all hostile and trap hosts follow the ordinary ones. The host of a
// kind is named <kind>.<Domain>, and "/" is its entry page.
const (
	// HostileGzipBomb serves "/" as a ~1 MB gzip body that decompresses
	// to ~1 GiB: a crawler should cut it at its body cap.
	HostileGzipBomb = "gzip-bomb"
	// HostileEndless streams "/" forever, without Content-Length.
	HostileEndless = "endless"
	// HostileSilent accepts TCP connections and never writes a byte.
	HostileSilent = "silent"
	// HostileCopies is a near-duplicate trap: a calendar of endless days
	// ("/" and "/day/N"), each the same story under its own date, each
	// linking to later days.
	HostileCopies = "copies"
)

// hostileKinds is every hostile and trap kind, in host order: the first
// four came first and keep their addresses.
var hostileKinds = [...]string{
	HostileGzipBomb, HostileEndless, HostileSilent, HostileCopies,
	HostileDripHeaders, HostileDripBody, HostileHugeHeaders, HostileMalformed,
	HostileCharsets, HostileBinary, HostileReset, HostileHang,
	HostileRedirectLoop, HostileRedirectChain, HostileManyLinks, HostileHugeRobots,
	HostileStorm429, HostileStorm503,
	TrapSessions, TrapFacets, TrapDeep, TrapCalendar,
	HostileLinger,
}

// HostileKindsAll returns the kind of every hostile and trap host, in the
// order in which their hosts follow the ordinary ones when all are started
// (Config.Hostile). A started subset (Config.HostileKinds) keeps this order.
func HostileKindsAll() []string { return slices.Clone(hostileKinds[:]) }

// IsTrap reports whether kind is one of the crawl traps: TrapSessions,
// TrapFacets, TrapDeep and TrapCalendar, hosts of valid, distinct pages
// whose links never run out (or, for the facets, run out only after
// hundreds of URLs a crawler gains nothing from). A crawler must bound them
// by URL shape or per-host budget: near-duplicate detection does not catch
// them. HostileCopies, whose endless pages are near-duplicates of each
// other, is not counted here.
func IsTrap(kind string) bool {
	switch kind {
	case TrapSessions, TrapFacets, TrapDeep, TrapCalendar:
		return true
	}
	return false
}

func hostileKindIndex(kind string) (int, bool) {
	for i, k := range hostileKinds {
		if k == kind {
			return i, true
		}
	}
	for i, k := range optInKinds {
		if k == kind {
			return len(hostileKinds) + i, true
		}
	}
	return 0, false
}

const (
	// bombMemberSize is what one gzip member decompresses to; bombMembers
	// of them make the advertised ~1 GiB.
	bombMemberSize = 1 << 20
	bombMembers    = 1 << 10
	// endlessChunk is the size of each flushed write of the endless host.
	endlessChunk = 32 << 10
)

// newBombMember compresses bombMemberSize spaces into one gzip member
// (about 1 KB). The bomb body is that member repeated: a valid multistream
// gzip file whose wire size is ~1/1000 of its decompressed size, produced
// without holding more than one member in memory.
func newBombMember() ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	chunk := bytes.Repeat([]byte{' '}, 64<<10)
	for n := 0; n < bombMemberSize; n += len(chunk) {
		if _, err := zw.Write(chunk); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// prepareHostile builds, once, the big bodies a started hostile host of the
// given kind serves, so that requests cost no more than copying them.
func (w *Web) prepareHostile(kind string) error {
	switch kind {
	case HostileGzipBomb:
		m, err := newBombMember()
		if err != nil {
			return fmt.Errorf("synthweb: build gzip bomb: %w", err)
		}
		w.bombMember = m
	case HostileEndless:
		r := newRNG(w.cfg.Seed, streamText, math.MaxUint32, 0)
		w.endlessChunk = w.text.appendExact(nil, &r, endlessChunk)
	case BombBrotli, BombZstd:
		return w.prepareBomb(kind)
	default:
		w.prepareMore(kind)
	}
	return nil
}

// serveHostile answers the HTTP hostile and trap hosts. The first kinds
// are answered here: "/" misbehaves, robots.txt and everything else is 404.
func (w *Web) serveHostile(rw *logWriter, r *http.Request, h *host) {
	switch h.hostile {
	case HostileCopies:
		w.serveCopies(rw, r, h)
		return
	case HostileGzipBomb, HostileEndless:
	default:
		w.serveMore(rw, r, h)
		return
	}
	if r.URL.Path != "/" {
		writeBody(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundBody)
		return
	}
	ctx := r.Context()
	hdr := rw.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	switch h.hostile {
	case HostileGzipBomb:
		hdr.Set("Content-Encoding", "gzip")
		hdr.Set("Content-Length", strconv.Itoa(len(w.bombMember)*bombMembers))
		rw.WriteHeader(http.StatusOK)
		if r.Method == http.MethodHead {
			return
		}
		for range bombMembers {
			if w.stopped(ctx) {
				return
			}
			if _, err := rw.Write(w.bombMember); err != nil {
				return // the client went away
			}
		}
	case HostileEndless:
		rw.WriteHeader(http.StatusOK)
		if r.Method == http.MethodHead {
			return
		}
		rw.Flush()
		for !w.stopped(ctx) {
			if _, err := rw.Write(w.endlessChunk); err != nil {
				return
			}
			rw.Flush()
		}
	}
}

// serveCopies answers the copies host: day N of the calendar ("/" is day
// 0) is the same story as every other day, under the heading "Day N", with
// links to days N+1, N+7 and 2N+1.
func (w *Web) serveCopies(rw *logWriter, r *http.Request, h *host) {
	day := uint64(0)
	if r.URL.Path != "/" {
		n, err := strconv.ParseUint(strings.TrimPrefix(r.URL.Path, "/day/"), 10, 62)
		if err != nil || !strings.HasPrefix(r.URL.Path, "/day/") {
			writeBody(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundBody)
			return
		}
		day = n
	}
	b := []byte("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Calendar</title>\n</head>\n<body>\n<h1>Day ")
	b = strconv.AppendUint(b, day, 10)
	b = append(b, "</h1>\n<p>"...)
	sr := newRNG(w.cfg.Seed, streamArticle, uint64(h.idx), 0)
	b = w.text.appendWords(b, &sr, 400)
	b = append(b, ".</p>\n<p>"...)
	for i, next := range []uint64{day + 1, day + 7, 2*day + 1} {
		b = append(b, `<a href="/day/`...)
		b = strconv.AppendUint(b, next, 10)
		b = append(b, `">`...)
		b = append(b, [...]string{"next day", "next week", "later"}[i]...)
		b = append(b, "</a> "...)
	}
	b = append(b, "</p>\n</body>\n</html>\n"...)
	writeBody(rw, r, http.StatusOK, "text/html; charset=utf-8", b)
}

// stopped reports whether the client is gone. When the web is closing it
// aborts the handler instead: a stream cut by a dying server must look
// truncated to the client, not like a complete response.
func (w *Web) stopped(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	case <-w.closing:
		abort()
	default:
	}
	return false
}

// silentServer accepts TCP connections, reads whatever arrives and never
// writes a byte.
type silentServer struct {
	w  *Web
	h  *host
	ln net.Listener

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// run is the accept loop; the caller has added it to w.wg.
func (s *silentServer) run() {
	defer s.w.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.w.closing:
				return
			default:
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			// Out of descriptors or similar: back off briefly, as
			// net/http does, unless closing.
			t := time.NewTimer(10 * time.Millisecond)
			select {
			case <-t.C:
			case <-s.w.closing:
				t.Stop()
				return
			}
			continue
		}
		if !s.track(c) {
			c.Close()
			return
		}
		s.w.wg.Add(1) // the accept loop's own count keeps the group non-zero
		go s.hold(c)
	}
}

func (s *silentServer) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

// hold keeps one connection open until the client closes it, HangLimit
// passes or the web closes (which closes the connection under it).
func (s *silentServer) hold(c net.Conn) {
	defer s.w.wg.Done()
	i := s.w.log.begin(Request{Addr: s.h.addr})
	_ = c.SetReadDeadline(time.Now().Add(s.w.cfg.HangLimit))
	_, _ = io.Copy(io.Discard, c) // ends on EOF, deadline or close; no error is interesting
	c.Close()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.w.log.end(i, 0, 0, time.Now(), false)
}

func (s *silentServer) close() error {
	err := s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	return err
}
