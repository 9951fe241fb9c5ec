//go:build ignore

// deflate-compare compresses the records of a WARC file (read back, each
// alone, as weft writes them: one gzip member a record) with klauspost's
// gzip, libdeflate and Intel ISA-L, and prints each one's speed and
// ratio, and klauspost's by record size. docs/encodings.md gives its
// figures. It needs cgo and Debian's libdeflate-dev and libisal-dev:
//
//	go run scripts/deflate-compare/main.go WARC.warc.gz         # by size, then each library, twice
//	go run scripts/deflate-compare/main.go WARC.warc.gz sizes   # by size only
package main

/*
#cgo LDFLAGS: -ldeflate -lisal
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>
#include <isa-l/igzip_lib.h>

static size_t isal_gzip(unsigned char *in, size_t inlen, unsigned char *out, size_t outlen, int level, unsigned char *lvlbuf, size_t lvllen) {
	struct isal_zstream s;
	isal_deflate_stateless_init(&s);
	s.next_in = in; s.avail_in = inlen;
	s.next_out = out; s.avail_out = outlen;
	s.level = level; s.level_buf = lvlbuf; s.level_buf_size = lvllen;
	s.gzip_flag = IGZIP_GZIP;
	s.end_of_stream = 1; s.flush = NO_FLUSH;
	if (isal_deflate_stateless(&s) != COMP_OK) return 0;
	return s.total_out;
}
*/
import "C"

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"
	"unsafe"

	"github.com/klauspost/compress/gzip"
)

// maxRecords is how many records of the file are read.
const maxRecords = 6000

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/deflate-compare/main.go WARC.warc.gz [sizes]")
		os.Exit(2)
	}
	recs, err := readRecords(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "deflate-compare: %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	fmt.Printf("%d records\n", len(recs))
	for _, c := range []struct {
		name   string
		lo, hi int
	}{{"<1KB", 0, 1024}, {"1-2KB", 1024, 2048}, {"2-16KB", 2048, 16384}, {">16KB", 16384, 1 << 30}} {
		var sel [][]byte
		for _, r := range recs {
			if len(r) >= c.lo && len(r) < c.hi {
				sel = append(sel, r)
			}
		}
		for _, lvl := range []int{1, -2, -3, 0} {
			measure(fmt.Sprintf("%-6s (%d) klauspost level %d", c.name, len(sel), lvl), sel, klauspost(lvl))
		}
	}
	if len(os.Args) > 2 {
		return
	}
	for range 2 {
		measure("klauspost level 1", recs, klauspost(1))
		for _, lvl := range []int{1, 2, 3} {
			c := C.libdeflate_alloc_compressor(C.int(lvl))
			measure(fmt.Sprintf("libdeflate level %d", lvl), recs, func(r, out []byte) int {
				return int(C.libdeflate_gzip_compress(c, unsafe.Pointer(&r[0]), C.size_t(len(r)), unsafe.Pointer(&out[0]), C.size_t(len(out))))
			})
			C.libdeflate_free_compressor(c)
		}
		for lvl, size := range []int{C.ISAL_DEF_LVL0_DEFAULT, C.ISAL_DEF_LVL1_DEFAULT, C.ISAL_DEF_LVL2_DEFAULT, C.ISAL_DEF_LVL3_DEFAULT} {
			lb := C.malloc(C.size_t(size))
			measure(fmt.Sprintf("isa-l level %d", lvl), recs, func(r, out []byte) int {
				return int(C.isal_gzip((*C.uchar)(unsafe.Pointer(&r[0])), C.size_t(len(r)), (*C.uchar)(unsafe.Pointer(&out[0])), C.size_t(len(out)), C.int(lvl), (*C.uchar)(lb), C.size_t(size)))
			})
			C.free(lb)
		}
	}
}

// readRecords reads the first maxRecords records of a WARC file, each its
// own gzip member, uncompressed; empty ones are left out.
func readRecords(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, err
	}
	var recs [][]byte
	for len(recs) < maxRecords {
		zr.Multistream(false)
		b, err := io.ReadAll(zr)
		if err != nil {
			return nil, err
		}
		if len(b) > 0 {
			recs = append(recs, b)
		}
		if err := zr.Reset(br); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// klauspost compresses a record as one gzip member at level.
func klauspost(level int) func(r, out []byte) int {
	var buf bytes.Buffer
	gw, err := gzip.NewWriterLevel(&buf, level)
	if err != nil {
		panic(err)
	}
	return func(r, _ []byte) int {
		buf.Reset()
		gw.Reset(&buf)
		gw.Write(r)
		gw.Close()
		return buf.Len()
	}
}

// measure compresses every record with compress (which writes into out
// and returns the length, 0 on failure) and prints the speed and ratio.
func measure(name string, recs [][]byte, compress func(r, out []byte) int) {
	if len(recs) == 0 {
		return
	}
	out := make([]byte, 1<<22)
	in, written := 0, 0
	start := time.Now()
	for _, r := range recs {
		n := compress(r, out)
		if n == 0 {
			fmt.Fprintf(os.Stderr, "deflate-compare: %s failed on a record of %d bytes\n", name, len(r))
			os.Exit(1)
		}
		in += len(r)
		written += n
	}
	d := time.Since(start)
	fmt.Printf("%-36s %6.0f MB/s  ratio %.2f  %7.1f us/record\n", name, float64(in)/d.Seconds()/1e6, float64(in)/float64(written), float64(d.Nanoseconds())/1e3/float64(len(recs)))
}
