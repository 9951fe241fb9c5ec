package warc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// RecoveredFile says what Recover did to one file.
type RecoveredFile struct {
	Name         string // final base name (the ".open" suffix removed)
	Records      int    // complete records kept, warcinfo included
	KeptBytes    int64  // length of the valid prefix kept
	DroppedBytes int64  // torn tail removed
	Removed      bool   // the file held no complete record at all (not even warcinfo) and was deleted
}

// Recover finishes the files a crashed Writer left in dir: every regular
// file named "*.warc.gz.open". Call it when the crawler starts, before
// writing to dir. Each file is cut after its last record in a valid prefix
// (see below), synced, and renamed to drop ".open"; a file with no valid
// record is removed; then dir is synced. Files without ".open" are never
// touched, and a directory without ".open" files is left as it is.
//
// The valid prefix is the longest run of gzip members from the start of
// the file each of which
//
//   - decompresses fully, with a right CRC-32 and length in its trailer,
//   - holds exactly one WARC record: a WARC/1.1 or WARC/1.0 line, fields
//     with one each of WARC-Record-ID, WARC-Type, WARC-Date and
//     Content-Length, a block of exactly Content-Length bytes, and the
//     closing CRLF CRLF, and nothing after it.
//
// Everything from the first member that fails is dropped, including any
// valid members after it: a crash tears only the tail of a file the
// Writer appends to, so damage before the end means the file cannot be
// trusted past it, and keeping records after a hole would hide the hole.
// Block digests are not recomputed: the CRC-32 already covers every byte
// the Writer compressed, so a digest could only catch a Writer bug, not a
// torn write, and it would cost a second hash over every byte.
//
// The Writer appends a request record and its response record together,
// but a crash can persist the first and not the second. Such a request
// record is kept: it is a complete, valid record of a request that was
// sent, and WARC 1.1 does not require the record its WARC-Concurrent-To
// names to exist. Files recovered this way may therefore end with a
// request record that has no response. Index and replay tools that pair
// records need no special case: they find no response for that URL.
//
// What was lost is for the caller to settle. After SIGKILL, a lost
// exchange is one whose WriteExchange had not returned: the data of a
// returned call is in the kernel and survives the process. After a power
// loss, exchanges whose WriteExchange returned can be lost too, because
// the Writer syncs a file only when it finishes it.
//
// Recover skips ".open" files that a live Writer, in this process or
// another, holds: the Writer locks its file (flock) until it is renamed.
// On platforms without those locks (see lock_other.go), Recover must not
// run while another process writes to dir. It also refuses a file whose
// finished name already exists, leaving both as they are. It is
// idempotent: run again after a crash in the middle, it finds the files
// it has not finished yet.
//
// Recover goes on to the other files after an error with one; it returns
// what it did, in file name order, and the errors joined, each naming its
// file. An error reading a file is never taken for a torn tail: the file
// is left untouched.
func Recover(dir string) ([]RecoveredFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("warc: recover: %w", err)
	}
	var (
		done    []RecoveredFile
		errs    []error
		changed bool
		sc      *scanner
	)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".warc.gz"+openSuffix) || !e.Type().IsRegular() {
			continue
		}
		if sc == nil {
			sc = newScanner()
		}
		path := filepath.Join(dir, e.Name())
		rf, dirChanged, err := recoverFile(sc, path)
		changed = changed || dirChanged
		if err != nil {
			errs = append(errs, fmt.Errorf("warc: recover %s: %w", path, err))
		}
		if rf != nil {
			done = append(done, *rf)
		}
	}
	if changed {
		if err := syncDir(dir); err != nil {
			errs = append(errs, fmt.Errorf("warc: recover %s: sync directory: %w", dir, err))
		}
	}
	return done, errors.Join(errs...)
}

// recoverFile recovers the ".open" file at path. It returns nil and no
// error for a file that is not Recover's to touch (held by a live
// Writer, or gone), and whether it renamed or removed the file.
func recoverFile(sc *scanner, path string) (rf *RecoveredFile, changed bool, err error) {
	final := strings.TrimSuffix(path, openSuffix)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil // finished or recovered meanwhile
	}
	if err != nil {
		return nil, false, err
	}
	closed := false
	defer func() {
		if !closed {
			f.Close()
		}
	}()
	if err := lockFile(f); errors.Is(err, errLocked) {
		return nil, false, nil // a live Writer's file
	} else if err != nil {
		return nil, false, fmt.Errorf("lock: %w", err)
	}
	// Between the directory listing and the lock, a Writer may have
	// renamed its file, or another Recover removed it; and path may be a
	// symbolic link. Only the regular file at path is ours to cut.
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() || !stillAt(f, path) {
		return nil, false, nil
	}
	if _, err := os.Lstat(final); err == nil {
		return nil, false, fmt.Errorf("%s exists too; both left as they are", filepath.Base(final))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}

	size := fi.Size()
	res, err := sc.scan(io.NewSectionReader(f, 0, size))
	if err != nil {
		return nil, false, fmt.Errorf("read: %w", err)
	}
	rf = &RecoveredFile{
		Name:         filepath.Base(final),
		Records:      res.records,
		KeptBytes:    res.kept,
		DroppedBytes: size - res.kept,
	}
	if res.records == 0 {
		closed = true
		if err := removeAndClose(f, path); err != nil {
			return nil, true, fmt.Errorf("remove: %w", err)
		}
		rf.Removed = true
		return rf, true, nil
	}
	if res.kept < size {
		if err := f.Truncate(res.kept); err != nil {
			return nil, false, fmt.Errorf("truncate to %d bytes: %w", res.kept, err)
		}
	}
	// The crashed Writer never synced: without this, the file could lose
	// data in a later crash after it has its finished name.
	if err := f.Sync(); err != nil {
		return nil, false, err
	}
	closed = true
	if err := closeAndRename(f, path, final); err != nil {
		return nil, true, fmt.Errorf("rename: %w", err)
	}
	return rf, true, nil
}

// scanner finds the valid prefix of a file, reading it once, front to
// back, in constant memory. It can be reused for file after file.
type scanner struct {
	cr  countingReader
	br  *bufio.Reader
	zr  gzip.Reader
	rec recordChecker
}

// scanBuffer is the read size. Larger buffers gain nothing measurable
// (BenchmarkRecover): decompression, not reading, is the cost.
const scanBuffer = 256 << 10

func newScanner() *scanner {
	s := &scanner{}
	s.br = bufio.NewReaderSize(&s.cr, scanBuffer)
	return s
}

// scanResult is the valid prefix of a file.
type scanResult struct {
	kept    int64 // length of the valid prefix
	records int   // records in it
	stop    error // why the next member is not valid; nil if the prefix is the whole file
}

// scan reads r to find its valid prefix. Invalid data ends the prefix and
// is not an error; an error reading r is.
//
// Member boundaries: the bufio.Reader is an io.ByteReader, so gzip.Reader
// reads straight from it, byte by byte where it must, and never past the
// trailer of a member (it adds no buffer of its own, which would read
// ahead into the next member). The offset of the end of a member is then
// what the bufio.Reader has taken from the file less what it holds.
func (s *scanner) scan(r io.Reader) (scanResult, error) {
	s.cr = countingReader{r: r}
	s.br.Reset(&s.cr)
	var res scanResult
	for {
		end, err := s.member()
		if s.cr.err != nil {
			return res, s.cr.err
		}
		if end {
			return res, nil
		}
		if err != nil {
			res.stop = err
			return res, nil
		}
		res.kept = s.cr.n - int64(s.br.Buffered())
		res.records++
	}
}

// member reads the next gzip member and checks that it holds exactly one
// record. It returns end at the end of the input, where a member would
// start.
func (s *scanner) member() (end bool, err error) {
	if err := s.zr.Reset(s.br); err != nil {
		// io.EOF only if not a byte of a header was there; a torn header
		// is io.ErrUnexpectedEOF.
		return err == io.EOF, err
	}
	s.zr.Multistream(false)
	s.rec.reset()
	// WriteTo hands the checker the decompressor's window directly and,
	// with Multistream(false), stops after the trailer: nil means the
	// member's CRC-32 and length were right.
	if _, err := s.zr.WriteTo(&s.rec); err != nil {
		return false, err
	}
	return false, s.rec.finish()
}

// countingReader counts the bytes read through it and keeps the first
// read error other than io.EOF, so that scan can tell a failing disk from
// a torn file.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// maxHeaderBytes bounds the WARC header of one record that Recover
// buffers. The Writer's headers are a few hundred bytes and the URL,
// twice; anything near this is not a header the Writer wrote.
const maxHeaderBytes = 1 << 20

// recordChecker is an io.Writer that takes the decompressed bytes of one
// gzip member and fails as soon as they are not exactly one WARC record.
// Only the header is buffered; the block is counted, not kept.
type recordChecker struct {
	state   int
	hdr     []byte // header bytes so far, while state is inHeader
	remain  int64  // block bytes still to come
	trailer int    // bytes of the closing CRLF CRLF seen
}

const (
	inHeader = iota
	inBlock
	inTrailer
	afterRecord
)

const endOfHeader = "\r\n\r\n"

func (c *recordChecker) reset() {
	c.state, c.hdr, c.remain, c.trailer = inHeader, c.hdr[:0], 0, 0
}

func (c *recordChecker) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		switch c.state {
		case inHeader:
			// Search only the new bytes and the three before them.
			from := max(len(c.hdr)-3, 0)
			take := min(len(p), maxHeaderBytes+len(endOfHeader)-len(c.hdr))
			c.hdr = append(c.hdr, p[:take]...)
			i := bytes.Index(c.hdr[from:], []byte(endOfHeader))
			if i < 0 {
				if len(c.hdr) >= maxHeaderBytes+len(endOfHeader) {
					return 0, fmt.Errorf("record header longer than %d bytes", maxHeaderBytes)
				}
				p = p[take:]
				continue
			}
			hdrLen := from + i + len(endOfHeader)
			length, err := parseHeader(c.hdr[:hdrLen])
			if err != nil {
				return 0, err
			}
			p = p[take-(len(c.hdr)-hdrLen):]
			c.hdr = c.hdr[:0]
			c.state, c.remain = inBlock, length
		case inBlock:
			k := int(min(c.remain, int64(len(p))))
			c.remain -= int64(k)
			p = p[k:]
		case inTrailer:
			if p[0] != endOfRecord[c.trailer] {
				return 0, errors.New("record block is not followed by CRLF CRLF: Content-Length is wrong")
			}
			c.trailer++
			p = p[1:]
		case afterRecord:
			return 0, errors.New("gzip member holds more than one record")
		}
		if c.state == inBlock && c.remain == 0 {
			c.state = inTrailer
		}
		if c.state == inTrailer && c.trailer == len(endOfRecord) {
			c.state = afterRecord
		}
	}
	return n, nil
}

// finish reports whether a whole record was written.
func (c *recordChecker) finish() error {
	switch c.state {
	case inHeader:
		if len(c.hdr) == 0 {
			return errors.New("gzip member is empty")
		}
		return errors.New("record header does not end")
	case inBlock:
		return fmt.Errorf("record block is %d bytes shorter than its Content-Length", c.remain)
	case inTrailer:
		return errors.New("record lacks its closing CRLF CRLF")
	}
	return nil
}

// parseHeader checks a WARC record header, from its version line to the
// blank line that ends it, and returns its Content-Length.
func parseHeader(h []byte) (int64, error) {
	h = h[:len(h)-len(endOfHeader)]
	line, rest, _ := bytes.Cut(h, []byte(crlf))
	if v := string(line); v != "WARC/1.1" && v != "WARC/1.0" {
		return 0, fmt.Errorf("record does not start with a WARC version line: %.40q", line)
	}
	var nID, nType, nDate, nLength int
	var length int64 = -1
	for fields := 0; len(rest) > 0; fields++ {
		line, rest, _ = bytes.Cut(rest, []byte(crlf))
		if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') && fields > 0 {
			continue // a folded continuation of the field before
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || !isToken(name) {
			return 0, fmt.Errorf("record header line is not a field: %.40q", line)
		}
		switch {
		case asciiEqualFold(name, "WARC-Record-ID"):
			nID++
		case asciiEqualFold(name, "WARC-Type"):
			nType++
		case asciiEqualFold(name, "WARC-Date"):
			nDate++
		case asciiEqualFold(name, "Content-Length"):
			nLength++
			v := bytes.Trim(value, " \t")
			if len(v) == 0 || len(v) > 18 || bytes.ContainsFunc(v, func(r rune) bool { return r < '0' || r > '9' }) {
				return 0, fmt.Errorf("record Content-Length %.40q is not a number", v)
			}
			length, _ = strconv.ParseInt(string(v), 10, 64) // at most 18 digits: cannot fail
		}
	}
	if nID != 1 || nType != 1 || nDate != 1 || nLength != 1 {
		return 0, fmt.Errorf("record header has %d WARC-Record-ID, %d WARC-Type, %d WARC-Date and %d Content-Length fields, want one each",
			nID, nType, nDate, nLength)
	}
	return length, nil
}

// isToken reports whether b is a field name: an RFC 9110 token.
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return false
		}
	}
	return true
}

func asciiEqualFold(b []byte, s string) bool {
	return len(b) == len(s) && strings.EqualFold(string(b), s)
}
