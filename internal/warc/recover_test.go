package warc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

// crawlFile is a finished file written by the Writer, to cut up.
type crawlFile struct {
	name    string
	raw     []byte
	members []member
	ids     []string     // WARC-Record-ID of each record, in order
	readOK  map[int]bool // prefixes c.raw[:n] that readBack has read
}

// readBack reads the recovered file at path, whose bytes are data, with
// both independent readers and checks that it holds want records, the
// first of them those of c. Identical bytes read identically, so each
// prefix of c is read only once: many cuts recover to the same prefix.
func (c *crawlFile) readBack(t *testing.T, path string, data []byte, want int) {
	t.Helper()
	prefix := len(data) <= len(c.raw) && bytes.Equal(data, c.raw[:len(data)])
	if prefix && c.readOK[len(data)] {
		return
	}
	recs := readIA(t, path)
	if len(recs) != want {
		t.Fatalf("%s: internetarchive reader reads %d records, want %d", path, len(recs), want)
	}
	for i, r := range recs[:min(want, len(c.ids))] {
		if id := r.Header.Get("WARC-Record-ID"); id != c.ids[i] && (prefix || i < want-1) {
			t.Fatalf("%s: record %d is %s, want %s", path, i, id, c.ids[i])
		}
	}
	if n, _ := readNlnwaStrict(t, path); n != want {
		t.Fatalf("%s: nlnwa reads %d records, want %d", path, n, want)
	}
	if prefix {
		c.readOK[len(data)] = true
	}
}

// end returns the offset just past member i.
func (c *crawlFile) end(i int) int64 { return c.members[i].Offset + c.members[i].Length }

// complete returns how many records end at or before offset cut, and the
// end of the last of them.
func (c *crawlFile) complete(cut int64) (records int, end int64) {
	for i := range c.members {
		if c.end(i) > cut {
			break
		}
		records, end = i+1, c.end(i)
	}
	return records, end
}

// writeCrawl writes exs into one file and reads it back.
func writeCrawl(t testing.TB, exs []Exchange) *crawlFile {
	t.Helper()
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir, Hostname: "crawler-7"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range exs {
		if _, err := w.WriteExchange(ex); err != nil {
			t.Fatal(err)
		}
	}
	mustClose(t, w)
	if len(w.Files()) != 1 {
		t.Fatalf("wrote %v, want one file", w.Files())
	}
	c := &crawlFile{name: w.Files()[0], readOK: map[int]bool{}}
	path := filepath.Join(dir, c.name)
	if c.raw, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	c.members = gzipMembers(t, path)
	for _, r := range readIA(t, path) {
		c.ids = append(c.ids, r.Header.Get("WARC-Record-ID"))
	}
	if len(c.ids) != len(c.members) || len(c.ids) != 1+2*len(exs) {
		t.Fatalf("%d records in %d members for %d exchanges", len(c.ids), len(c.members), len(exs))
	}
	return c
}

// crashExchanges is mixedExchanges and then small pages of many sizes.
func crashExchanges(t testing.TB) []Exchange {
	exs := mixedExchanges(t)
	for i := range 20 {
		exs = append(exs, pageExchange(fmt.Sprintf("http://example.org/small/%d", i), 20+i, htmlPage(uint64(200+i), 300+i*400)))
	}
	return exs
}

// crash leaves data in dir under name+".open", as a killed Writer would.
func crash(t testing.TB, dir, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name+openSuffix), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkRecovered checks what Recover did to a copy of c cut at cut (and
// possibly followed by invalid bytes, size bytes in all): it kept exactly
// the records complete before the cut, byte for byte, and the file reads
// back cleanly with both independent readers.
func checkRecovered(t *testing.T, dir string, c *crawlFile, cut, size int64, got []RecoveredFile) {
	t.Helper()
	want, end := c.complete(cut)
	if len(got) != 1 {
		t.Fatalf("cut at %d: Recover reported %+v, want one file", cut, got)
	}
	rf := got[0]
	wantRF := RecoveredFile{Name: c.name, Records: want, KeptBytes: end, DroppedBytes: size - end, Removed: want == 0}
	if rf != wantRF {
		t.Fatalf("cut at %d: Recover reported %+v, want %+v", cut, rf, wantRF)
	}
	names := listDir(t, dir)
	if want == 0 {
		if len(names) != 0 {
			t.Fatalf("cut at %d: no complete record, yet the directory holds %v", cut, names)
		}
		return
	}
	if len(names) != 1 || names[0] != c.name {
		t.Fatalf("cut at %d: directory holds %v, want %s", cut, names, c.name)
	}
	path := filepath.Join(dir, c.name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, c.raw[:end]) {
		t.Fatalf("cut at %d: recovered file (%d bytes) is not the first %d bytes of the original", cut, len(data), end)
	}
	c.readBack(t, path, data, want)
}

// TestRecoverCrashes cuts a real file at every member boundary, one byte
// either side of each, and at 200 random offsets, and recovers each cut.
// Not parallel: readNlnwaStrict must not run alongside other tests.
func TestRecoverCrashes(t *testing.T) {
	c := writeCrawl(t, crashExchanges(t))
	size := int64(len(c.raw))
	cuts := map[int64]bool{}
	for i := range c.members {
		for _, d := range []int64{-1, 0, 1} {
			if cut := c.members[i].Offset + d; cut >= 0 {
				cuts[cut] = true
			}
		}
	}
	for _, d := range []int64{-1, 0} {
		cuts[size+d] = true
	}
	r := rand.New(rand.NewPCG(7, 11))
	for range 200 {
		cuts[r.Int64N(size+1)] = true
	}
	sorted := slices.Sorted(func(yield func(int64) bool) {
		for c := range cuts {
			if !yield(c) {
				return
			}
		}
	})
	t.Logf("%d members, %d bytes, %d cuts", len(c.members), size, len(sorted))

	for _, cut := range sorted {
		dir := t.TempDir()
		crash(t, dir, c.name, c.raw[:cut])
		got, err := Recover(dir)
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		checkRecovered(t, dir, c, cut, cut, got)

		// Recovering again finds nothing to do.
		if got, err := Recover(dir); err != nil || len(got) != 0 {
			t.Fatalf("cut at %d: second Recover: %+v, %v", cut, got, err)
		}
	}
}

// TestRecoverInvalidTail appends invalid data after valid prefixes: each
// must end the valid prefix, for the reason given.
func TestRecoverInvalidTail(t *testing.T) {
	c := writeCrawl(t, crashExchanges(t))
	r := rand.New(rand.NewPCG(3, 5))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	// A request record, to build broken variants of.
	req := c.members[1].Data
	if !bytes.Contains(req, []byte("WARC-Type: request\r\n")) {
		t.Fatalf("member 1 is not a request record")
	}
	gz := func(p []byte) []byte { return gzipBytes(t, p) }
	withField := func(old, new string) []byte {
		if !bytes.Contains(req, []byte(old)) {
			t.Fatalf("request record lacks %q", old)
		}
		return gz(bytes.Replace(req, []byte(old), []byte(new), 1))
	}
	reqLen := len(req) - len(warcHeaderOf(t, req)) - len(endOfRecord)
	valid := c.raw[c.members[1].Offset:c.end(1)]
	badCRC := bytes.Clone(valid)
	badCRC[len(badCRC)-8] ^= 0x01
	badSize := bytes.Clone(valid)
	badSize[len(badSize)-1] ^= 0x80
	// A member of stored blocks: a changed byte in the middle changes the
	// data, not the structure, so only the CRC-32 can catch it.
	stored := func() []byte {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.NoCompression)
		zw.Write(req)
		zw.Close()
		return b.Bytes()
	}()
	storedBad := bytes.Clone(stored)
	storedBad[len(storedBad)/2] ^= 0x20

	for _, tc := range []struct {
		name   string
		keep   []byte // a valid record's member, or nothing
		junk   []byte
		reason string // in the error that ends the prefix
	}{
		{"zeros", nil, make([]byte, 4096), "invalid header"},
		{"random", nil, random(1000), "invalid header"},
		{"gzip magic then random", nil, append([]byte{0x1f, 0x8b, 8, 0}, random(3000)...), ""},
		{"first half of a member", nil, valid[:len(valid)/2], "unexpected EOF"},
		{"member without its trailer", nil, valid[:len(valid)-8], "unexpected EOF"},
		{"member with half its trailer", nil, valid[:len(valid)-3], "unexpected EOF"},
		{"CRC-32 wrong", nil, badCRC, "checksum"},
		{"length wrong", nil, badSize, "checksum"},
		{"stored member, middle byte changed", nil, storedBad, "checksum"},
		{"stored member, valid", stored, nil, ""},
		{"valid member then zeros", valid, make([]byte, 100), "invalid header"},
		{"valid member then a torn one", valid, valid[:40], "unexpected EOF"},
		{"empty member", nil, gz(nil), "empty"},
		{"not a WARC record", nil, gz([]byte("hello, world\r\n\r\n")), "WARC version"},
		{"WARC/2.0", nil, withField("WARC/1.1\r\n", "WARC/2.0\r\n"), "WARC version"},
		{"two records in a member", nil, gz(append(bytes.Clone(req), req...)), "more than one record"},
		{"Content-Length too small", nil, withField(fmt.Sprintf("Content-Length: %d\r\n", reqLen), fmt.Sprintf("Content-Length: %d\r\n", reqLen-1)), "Content-Length is wrong"},
		{"Content-Length too large", nil, withField(fmt.Sprintf("Content-Length: %d\r\n", reqLen), fmt.Sprintf("Content-Length: %d\r\n", reqLen+100)), "shorter than its Content-Length"},
		{"Content-Length not a number", nil, withField(fmt.Sprintf("Content-Length: %d\r\n", reqLen), "Content-Length: -1\r\n"), "not a number"},
		{"no WARC-Record-ID", nil, withField("WARC-Record-ID:", "WARC-Record-Id-Was:"), "0 WARC-Record-ID"},
		{"two WARC-Type", nil, withField("WARC-Type: request\r\n", "WARC-Type: request\r\nWARC-Type: request\r\n"), "2 WARC-Type"},
		{"header line without a colon", nil, withField("WARC-Type: request\r\n", "WARC-Type: request\r\nno colon\r\n"), "not a field"},
		{"record without its closing CRLF CRLF", nil, gz(req[:len(req)-len(endOfRecord)]), "closing CRLF CRLF"},
		{"header that never ends", nil, gz(append([]byte("WARC/1.1\r\n"), bytes.Repeat([]byte("X-A: b\r\n"), 200_000)...)), "header longer"},
		{"header cut short", nil, gz([]byte("WARC/1.1\r\nWARC-Type: request\r\n")), "does not end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// After warcinfo, after a request (its response torn off), after
			// a response, and after the whole file.
			for _, k := range []int{1, 2, 3, len(c.members)} {
				prefix := c.end(k - 1)
				data := append(bytes.Clone(c.raw[:prefix]), tc.keep...)
				data = append(data, tc.junk...)
				kept := prefix + int64(len(tc.keep))
				records := k
				if tc.keep != nil {
					records++
				}

				// The reason, from the scanner itself.
				res, err := newScanner().scan(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				if res.records != records || res.kept != kept {
					t.Fatalf("after %d records: scan kept %d records, %d bytes (stopped by %v); want %d, %d", k, res.records, res.kept, res.stop, records, kept)
				}
				if res.stop == nil && tc.reason != "" || res.stop != nil && !strings.Contains(res.stop.Error(), tc.reason) {
					t.Errorf("after %d records: scan stopped by %v, want an error about %q", k, res.stop, tc.reason)
				}

				dir := t.TempDir()
				crash(t, dir, c.name, data)
				got, err := Recover(dir)
				if err != nil {
					t.Fatal(err)
				}
				want := RecoveredFile{Name: c.name, Records: records, KeptBytes: kept, DroppedBytes: int64(len(data)) - kept}
				if len(got) != 1 || got[0] != want {
					t.Fatalf("after %d records: Recover reported %+v, want %+v", k, got, want)
				}
				path := filepath.Join(dir, c.name)
				b, err := os.ReadFile(path)
				if err != nil || !bytes.Equal(b, data[:kept]) {
					t.Fatalf("after %d records: recovered file is not the valid prefix (%v)", k, err)
				}
				c.readBack(t, path, b, records)
			}
		})
	}
}

// warcHeaderOf returns the WARC header of an uncompressed record, up to
// and including the blank line.
func warcHeaderOf(t testing.TB, rec []byte) []byte {
	t.Helper()
	i := bytes.Index(rec, []byte(endOfHeader))
	if i < 0 {
		t.Fatal("no end of WARC header")
	}
	return rec[:i+len(endOfHeader)]
}

// TestRecoverCorruptMember changes one byte in the middle of each member
// in turn: the valid prefix ends just before that member, whatever valid
// members follow it.
func TestRecoverCorruptMember(t *testing.T) {
	c := writeCrawl(t, crashExchanges(t))
	checksum := 0
	for i, m := range c.members {
		data := bytes.Clone(c.raw)
		data[m.Offset+m.Length/2] ^= 0x55
		res, err := newScanner().scan(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if res.stop == nil && sameInflated(t, data, c.raw) {
			// Deflate is not free of redundancy: a byte of a Huffman table
			// that codes no symbol in use can change without changing a
			// byte of the output, which is then intact (and its CRC right).
			continue
		}
		if res.records != i || res.kept != m.Offset || res.stop == nil {
			t.Fatalf("byte changed in member %d: scan kept %d records, %d bytes (stopped by %v); want %d, %d", i, res.records, res.kept, res.stop, i, m.Offset)
		}
		if errors.Is(res.stop, gzip.ErrChecksum) {
			checksum++
		}
		if i == 0 {
			continue // checked below: the file is removed
		}
		dir := t.TempDir()
		crash(t, dir, c.name, data)
		got, err := Recover(dir)
		if err != nil {
			t.Fatal(err)
		}
		checkRecovered(t, dir, c, m.Offset, int64(len(data)), got)
	}
	// The gzip-encoded page is incompressible, so gzip stores it: there the
	// change passes the decompressor and only the CRC-32 catches it.
	if checksum == 0 {
		t.Errorf("no member failed on its CRC-32")
	}
	t.Logf("%d of %d members failed on their CRC-32, the others in decompression", checksum, len(c.members))
}

// sameInflated reports whether two multi-member gzip files decompress to
// the same bytes.
func sameInflated(t *testing.T, a, b []byte) bool {
	t.Helper()
	inflate := func(p []byte) []byte {
		zr, err := gzip.NewReader(bytes.NewReader(p))
		if err != nil {
			return nil
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			return nil
		}
		return out
	}
	x, y := inflate(a), inflate(b)
	return x != nil && bytes.Equal(x, y)
}

// TestRecoverRemovesFileWithoutRecord: a file cut inside its warcinfo
// record, or empty, is removed.
func TestRecoverRemovesFileWithoutRecord(t *testing.T) {
	c := writeCrawl(t, crashExchanges(t)[:1])
	for _, cut := range []int64{0, 1, 10, c.end(0) / 2, c.end(0) - 8, c.end(0) - 1} {
		dir := t.TempDir()
		crash(t, dir, c.name, c.raw[:cut])
		got, err := Recover(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := []RecoveredFile{{Name: c.name, DroppedBytes: cut, Removed: true}}
		if !slices.Equal(got, want) {
			t.Errorf("cut at %d: Recover reported %+v, want %+v", cut, got, want)
		}
		if names := listDir(t, dir); len(names) != 0 {
			t.Errorf("cut at %d: directory holds %v", cut, names)
		}
	}
}

type fileState struct {
	data  []byte
	mode  fs.FileMode
	mtime time.Time
}

func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	s := map[string]fileState{}
	for _, name := range listDir(t, dir) {
		path := filepath.Join(dir, name)
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		st := fileState{mode: fi.Mode(), mtime: fi.ModTime()}
		if fi.Mode().IsRegular() {
			if st.data, err = os.ReadFile(path); err != nil {
				t.Fatal(err)
			}
		}
		s[name] = st
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	s["."] = fileState{mode: fi.Mode(), mtime: fi.ModTime()}
	return s
}

func compareSnapshots(t *testing.T, before, after map[string]fileState) {
	t.Helper()
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			t.Errorf("%s was removed", name)
		case !bytes.Equal(a.data, b.data) || a.mode != b.mode || !a.mtime.Equal(b.mtime):
			t.Errorf("%s changed: %v %v %d bytes, was %v %v %d bytes", name, a.mode, a.mtime, len(a.data), b.mode, b.mtime, len(b.data))
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("%s appeared", name)
		}
	}
}

// TestRecoverLeavesOtherFiles: finished files, other files and things
// named like ".open" files that are not regular files stay as they are.
func TestRecoverLeavesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir, MaxFileSize: 8_000})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := w.WriteExchange(pageExchange(fmt.Sprintf("http://example.com/%d", i), i, htmlPage(uint64(i), 5_000))); err != nil {
			t.Fatal(err)
		}
	}
	mustClose(t, w)
	if len(w.Files()) < 3 {
		t.Fatalf("want several files, got %v", w.Files())
	}
	// A torn file elsewhere, reachable by a symbolic link named like one.
	elsewhere := filepath.Join(t.TempDir(), "x.warc.gz.open")
	src, _ := os.ReadFile(filepath.Join(dir, w.Files()[0]))
	if err := os.WriteFile(elsewhere, src[:len(src)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("notes"), 0o644),
		os.WriteFile(filepath.Join(dir, "a.warc.open"), []byte("not gzip"), 0o644),
		os.WriteFile(filepath.Join(dir, "b.warc.gz.open.bak"), []byte("not gzip"), 0o644),
		os.Mkdir(filepath.Join(dir, "c.warc.gz.open"), 0o755),
		os.Symlink(elsewhere, filepath.Join(dir, "d.warc.gz.open")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, name := range listDir(t, dir) {
		if name != "d.warc.gz.open" {
			if err := os.Chtimes(filepath.Join(dir, name), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := snapshot(t, dir)
	elsewhereBefore, _ := os.ReadFile(elsewhere)

	got, err := Recover(dir)
	if err != nil || len(got) != 0 {
		t.Fatalf("Recover = %+v, %v; want nothing done", got, err)
	}
	compareSnapshots(t, before, snapshot(t, dir))
	if b, _ := os.ReadFile(elsewhere); !bytes.Equal(b, elsewhereBefore) {
		t.Errorf("Recover followed a symbolic link")
	}

	// And an empty directory.
	if got, err := Recover(t.TempDir()); err != nil || len(got) != 0 {
		t.Errorf("Recover(empty directory) = %+v, %v", got, err)
	}
}

// TestRecoverSeveralFiles recovers files of every fate in one directory,
// one scanner reused from file to file after each kind of stop.
func TestRecoverSeveralFiles(t *testing.T) {
	c := writeCrawl(t, crashExchanges(t)[:4])
	dir := t.TempDir()
	names := make([]string, 5)
	for i := range names {
		names[i] = fmt.Sprintf("weft-20260101000000-%05d-aaaaaa.warc.gz", i)
	}
	bad := bytes.Clone(c.raw)
	bad[c.members[3].Offset+c.members[3].Length/2] ^= 0x55
	crash(t, dir, names[0], c.raw[:c.end(4)+7])                             // torn
	crash(t, dir, names[1], c.raw[:c.end(0)-1])                             // inside warcinfo
	crash(t, dir, names[2], bad)                                            // corrupt member 3
	crash(t, dir, names[3], c.raw)                                          // complete
	crash(t, dir, names[4], append(bytes.Clone(c.raw[:c.end(1)]), 0, 0, 0)) // zeros
	got, err := Recover(dir)
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(c.raw))
	want := []RecoveredFile{
		{names[0], 5, c.end(4), 7, false},
		{names[1], 0, 0, c.end(0) - 1, true},
		{names[2], 3, c.end(2), size - c.end(2), false},
		{names[3], len(c.members), size, 0, false},
		{names[4], 2, c.end(1), 3, false},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Recover reported\n%+v, want\n%+v", got, want)
	}
	if got, want := listDir(t, dir), []string{names[0], names[2], names[3], names[4]}; !slices.Equal(got, want) {
		t.Errorf("directory holds %v, want %v", got, want)
	}
}

// TestRecoverErrors: errors name the directory or file, and the file
// concerned is left as it is while the others are recovered.
func TestRecoverErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := Recover(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Recover(missing directory) = %v, want an error naming it", err)
	}

	c := writeCrawl(t, crashExchanges(t)[:3])
	dir := t.TempDir()
	// A ".open" file whose finished name exists too: not ours to decide.
	clash := "weft-20260101000000-00000-aaaaaa.warc.gz"
	crash(t, dir, clash, c.raw[:c.end(2)+5])
	if err := os.WriteFile(filepath.Join(dir, clash), []byte("finished"), 0o644); err != nil {
		t.Fatal(err)
	}
	crash(t, dir, c.name, c.raw[:c.end(2)+5])
	before := snapshot(t, dir)
	got, err := Recover(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, clash+openSuffix)) {
		t.Errorf("Recover = %v, want an error naming %s", err, clash+openSuffix)
	}
	want := []RecoveredFile{{Name: c.name, Records: 3, KeptBytes: c.end(2), DroppedBytes: 5}}
	if !slices.Equal(got, want) {
		t.Errorf("Recover reported %+v, want %+v", got, want)
	}
	after := snapshot(t, dir)
	for _, name := range []string{clash, clash + openSuffix} {
		if !bytes.Equal(before[name].data, after[name].data) {
			t.Errorf("%s changed", name)
		}
	}
}

// TestRecoverSkipsLiveFile: the ".open" file of a live Writer, in this
// process or another, is locked, and Recover leaves it alone.
func TestRecoverSkipsLiveFile(t *testing.T) {
	if !filesLocked {
		t.Skip("no file locks on this platform")
	}
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteExchange(pageExchange("http://example.com/1", 1, htmlPage(1, 5_000))); err != nil {
		t.Fatal(err)
	}
	name := w.Files()[0]
	before := snapshot(t, dir)
	got, err := Recover(dir)
	if err != nil || len(got) != 0 {
		t.Fatalf("Recover with a live writer = %+v, %v; want nothing done", got, err)
	}
	compareSnapshots(t, before, snapshot(t, dir))
	if _, err := w.WriteExchange(pageExchange("http://example.com/2", 2, htmlPage(2, 5_000))); err != nil {
		t.Fatal(err)
	}
	mustClose(t, w)
	if got, err := Recover(dir); err != nil || len(got) != 0 {
		t.Fatalf("Recover after Close = %+v, %v", got, err)
	}
	if recs := readIA(t, filepath.Join(dir, name)); len(recs) != 5 {
		t.Errorf("%s holds %d records, want 5", name, len(recs))
	}
}

// TestRecoverThenNewWriter is the crawler's start after a crash: Recover,
// then a new Writer in the same directory, even one that would pick the
// very same file name, starts a new file and leaves the recovered one be.
func TestRecoverThenNewWriter(t *testing.T) {
	c := writeCrawl(t, crashExchanges(t)[:6])
	for _, sameName := range []bool{false, true} {
		t.Run(fmt.Sprintf("same-name=%v", sameName), func(t *testing.T) {
			dir := t.TempDir()
			crash(t, dir, c.name, c.raw[:c.end(8)+100])
			got, err := Recover(dir)
			if err != nil {
				t.Fatal(err)
			}
			want := []RecoveredFile{{Name: c.name, Records: 9, KeptBytes: c.end(8), DroppedBytes: 100}}
			if !slices.Equal(got, want) {
				t.Fatalf("Recover reported %+v, want %+v", got, want)
			}
			before := snapshot(t, dir)

			w, err := NewWriter(Config{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if sameName {
				// The name c.name has: same second, sequence number and token.
				if fileNameRE.FindString(c.name) == "" {
					t.Fatalf("%q is not a file name the Writer writes", c.name)
				}
				parts := strings.Split(strings.TrimSuffix(c.name, ".warc.gz"), "-") // weft, time, seq, token
				at, err := time.Parse("20060102150405", parts[1])
				if err != nil {
					t.Fatal(err)
				}
				w.now = func() time.Time { return at }
				w.token = parts[3]
			}
			if _, err := w.WriteExchange(pageExchange("http://example.com/after", 1, []byte("after"))); err != nil {
				t.Fatal(err)
			}
			mustClose(t, w)
			if len(w.Files()) != 1 || w.Files()[0] == c.name {
				t.Fatalf("new writer wrote %v, recovered file is %s", w.Files(), c.name)
			}
			if next := strings.Replace(c.name, "-00000-", "-00001-", 1); sameName && w.Files()[0] != next {
				t.Errorf("new writer wrote %s, want the next free name %s", w.Files()[0], next)
			}
			after := snapshot(t, dir)
			delete(after, w.Files()[0])
			after["."] = before["."] // the directory itself changed, of course
			compareSnapshots(t, before, after)
			if n, _ := readNlnwaStrict(t, filepath.Join(dir, c.name)); n != 9 {
				t.Errorf("recovered file holds %d records", n)
			}
			if n, _ := readNlnwaStrict(t, filepath.Join(dir, w.Files()[0])); n != 3 {
				t.Errorf("new file holds %d records", n)
			}
		})
	}
}

// TestWriterNeverReusesName: files already holding the names a Writer
// would pick, finished or ".open", are skipped, never opened.
func TestWriterNeverReusesName(t *testing.T) {
	dir := t.TempDir()
	at := testDate
	const token = "0123ab"
	name := func(seq int) string {
		return fmt.Sprintf("weft-%s-%05d-%s.warc.gz", at.Format("20060102150405"), seq, token)
	}
	for seq, suffix := range []string{"", openSuffix, "", openSuffix} {
		if err := os.WriteFile(filepath.Join(dir, name(seq)+suffix), []byte("someone else's"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, dir)
	w, err := NewWriter(Config{Dir: dir, MaxFileSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() time.Time { return at }
	w.token = token
	for i := range 2 {
		if _, err := w.WriteExchange(pageExchange("http://example.com/x", i, []byte("x"))); err != nil {
			t.Fatal(err)
		}
	}
	mustClose(t, w)
	if got, want := w.Files(), []string{name(4), name(5)}; !slices.Equal(got, want) {
		t.Errorf("writer wrote %v, want %v", got, want)
	}
	after := snapshot(t, dir)
	for name := range after {
		if _, ok := before[name]; !ok {
			delete(after, name)
		}
	}
	after["."] = before["."]
	compareSnapshots(t, before, after)
	for _, f := range w.Files() {
		if recs := readIA(t, filepath.Join(dir, f)); len(recs) != 3 || recs[0].Header.Get("WARC-Filename") != f {
			t.Errorf("%s: %d records", f, len(recs))
		}
	}

	// With every name taken, the writer gives up and says which name.
	dir = t.TempDir()
	for seq := range maxNameTries {
		if err := os.WriteFile(filepath.Join(dir, name(seq)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err = NewWriter(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() time.Time { return at }
	w.token = token
	if _, err := w.WriteExchange(pageExchange("http://example.com/x", 0, []byte("x"))); err == nil || !strings.Contains(err.Error(), name(maxNameTries-1)) {
		t.Errorf("WriteExchange with every name taken = %v", err)
	}
	mustClose(t, w)
	if n := len(listDir(t, dir)); n != maxNameTries {
		t.Errorf("directory holds %d files, want %d", n, maxNameTries)
	}
}

// FuzzRecoverTail appends data (gzipped into one member unless raw) to a
// valid file and checks the scan against the internetarchive reader:
// whatever the scan keeps, that reader reads cleanly, record for record.
func FuzzRecoverTail(f *testing.F) {
	c := writeCrawl(f, crashExchanges(f)[:1])
	f.Add(c.members[1].Data, false)
	f.Add(c.raw[c.members[1].Offset:c.end(1)], true)
	f.Add([]byte("WARC/1.1\r\nWARC-Type: x\r\nWARC-Record-ID: <a>\r\nWARC-Date: d\r\nContent-Length: 2\r\n\r\nab\r\n\r\n"), false)
	f.Add([]byte("WARC/1.0\r\nWARC-Type: x\r\n more\r\nWARC-Record-ID: <a>\r\nWARC-Date: d\r\nContent-Length: 0\r\n\r\n\r\n\r\n"), false)
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0}, true)
	f.Fuzz(func(t *testing.T, tail []byte, raw bool) {
		if !raw {
			tail = gzipBytes(t, tail)
		}
		data := append(bytes.Clone(c.raw), tail...)
		res, err := newScanner().scan(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if res.records < len(c.members) || res.kept < int64(len(c.raw)) {
			t.Fatalf("scan kept %d records, %d bytes: less than the valid file", res.records, res.kept)
		}
		if res.stop == nil && res.kept != int64(len(data)) {
			t.Fatalf("scan stopped at %d of %d bytes without a reason", res.kept, len(data))
		}
		recs := readIAFrom(t, bytes.NewReader(data[:res.kept]), "kept prefix")
		if len(recs) != res.records {
			t.Fatalf("scan kept %d records, the internetarchive reader reads %d", res.records, len(recs))
		}
		if res.records > len(c.members) && recs[len(recs)-1].Offset != int64(len(c.raw)) {
			t.Fatalf("the added record is at %d, want %d", recs[len(recs)-1].Offset, len(c.raw))
		}
	})
}

// BenchmarkRecover recovers a 100 MB file of 40 KB HTML pages, complete
// but for a torn tail of a few bytes, from the page cache: the cost is
// decompression. MB/s is of compressed bytes on disk.
func BenchmarkRecover(b *testing.B) {
	const target = 100 << 20
	dir := b.TempDir()
	w, err := NewWriter(Config{Dir: dir, Hostname: "crawler-7"})
	if err != nil {
		b.Fatal(err)
	}
	pages := make([][]byte, 64)
	for i := range pages {
		pages[i] = htmlPage(uint64(i), 40_000)
	}
	var payload int64
	for i := 0; w.Bytes() < target; i++ {
		p := pages[i%len(pages)]
		if _, err := w.WriteExchange(pageExchange(fmt.Sprintf("http://example.com/a/%d", i), i, p)); err != nil {
			b.Fatal(err)
		}
		payload += int64(len(p))
	}
	mustClose(b, w)
	name := w.Files()[0]
	final := filepath.Join(dir, name)
	st, err := os.Stat(final)
	if err != nil {
		b.Fatal(err)
	}
	size := st.Size()
	torn := []byte{0x1f, 0x8b, 8, 0, 0}

	b.SetBytes(size + int64(len(torn)))
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		b.StopTimer()
		if err := os.Rename(final, final+openSuffix); err != nil {
			b.Fatal(err)
		}
		f, err := os.OpenFile(final+openSuffix, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			b.Fatal(err)
		}
		f.Write(torn)
		f.Close()
		b.StartTimer()
		got, err := Recover(dir)
		if err != nil || len(got) != 1 || got[0].KeptBytes != size || got[0].DroppedBytes != int64(len(torn)) {
			b.Fatalf("Recover = %+v, %v", got, err)
		}
	}
	cpu.report(b)
	b.ReportMetric(float64(payload)*float64(b.N)/b.Elapsed().Seconds()/1e6, "payload-MB/s")
}
