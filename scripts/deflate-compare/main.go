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

func main() {
	f, _ := os.Open(os.Args[1])
	br := bufio.NewReader(f)
	zr, err := gzip.NewReader(br)
	if err != nil {
		panic(err)
	}
	var recs [][]byte
	total := 0
	for len(recs) < 6000 {
		zr.Multistream(false)
		b, err := io.ReadAll(zr)
		if err != nil {
			panic(err)
		}
		recs = append(recs, b)
		total += len(b)
		if err := zr.Reset(br); err != nil {
			break
		}
	}
	fmt.Printf("%d records, %d bytes\n", len(recs), total)
	classes(recs)
	if len(os.Args) > 2 {
		return
	}
	var buf bytes.Buffer
	gw, _ := gzip.NewWriterLevel(&buf, 1)
	out := make([]byte, 1<<22)
	for round := 0; round < 2; round++ {
		t := time.Now()
		n := 0
		for _, r := range recs {
			buf.Reset()
			gw.Reset(&buf)
			gw.Write(r)
			gw.Close()
			n += buf.Len()
		}
		d := time.Since(t)
		fmt.Printf("klauspost L1: %.0f MB/s ratio %.2f, %.1f us/record\n", float64(total)/d.Seconds()/1e6, float64(total)/float64(n), float64(d.Microseconds())/float64(len(recs)))
		for _, lvl := range []int{1, 2, 3} {
			c := C.libdeflate_alloc_compressor(C.int(lvl))
			t = time.Now()
			n = 0
			for _, r := range recs {
				m := C.libdeflate_gzip_compress(c, unsafe.Pointer(&r[0]), C.size_t(len(r)), unsafe.Pointer(&out[0]), C.size_t(len(out)))
				n += int(m)
			}
			d = time.Since(t)
			fmt.Printf("libdeflate L%d: %.0f MB/s ratio %.2f, %.1f us/record\n", lvl, float64(total)/d.Seconds()/1e6, float64(total)/float64(n), float64(d.Microseconds())/float64(len(recs)))
			C.libdeflate_free_compressor(c)
		}
		for _, lvl := range []int{0, 1, 2, 3} {
			lsz := []int{C.ISAL_DEF_LVL0_DEFAULT, C.ISAL_DEF_LVL1_DEFAULT, C.ISAL_DEF_LVL2_DEFAULT, C.ISAL_DEF_LVL3_DEFAULT}[lvl]
			lb := C.malloc(C.size_t(lsz))
			t = time.Now()
			n = 0
			for _, r := range recs {
				m := C.isal_gzip((*C.uchar)(unsafe.Pointer(&r[0])), C.size_t(len(r)), (*C.uchar)(unsafe.Pointer(&out[0])), C.size_t(len(out)), C.int(lvl), (*C.uchar)(lb), C.size_t(lsz))
				if m == 0 {
					panic("isal")
				}
				n += int(m)
			}
			d = time.Since(t)
			fmt.Printf("isa-l L%d: %.0f MB/s ratio %.2f, %.1f us/record\n", lvl, float64(total)/d.Seconds()/1e6, float64(total)/float64(n), float64(d.Microseconds())/float64(len(recs)))
			C.free(lb)
		}
	}
}

func classes(recs [][]byte) {
	type cls struct {
		name   string
		lo, hi int
	}
	for _, c := range []cls{{"<1KB", 0, 1024}, {"1-2KB", 1024, 2048}, {"2-16KB", 2048, 16384}, {">16KB", 16384, 1 << 30}} {
		var sel [][]byte
		tot := 0
		for _, r := range recs {
			if len(r) >= c.lo && len(r) < c.hi {
				sel = append(sel, r)
				tot += len(r)
			}
		}
		if len(sel) == 0 {
			continue
		}
		for _, lvl := range []int{1, -2, -3, 0} {
			var buf bytes.Buffer
			gw, _ := gzip.NewWriterLevel(&buf, lvl)
			t := time.Now()
			n := 0
			for k := 0; k < 3; k++ {
				for _, r := range sel {
					buf.Reset()
					gw.Reset(&buf)
					gw.Write(r)
					gw.Close()
					n += buf.Len()
				}
			}
			d := time.Since(t) / 3
			fmt.Printf("%-7s %5d recs, mean %6d B: level %2d %6.1f us/rec, ratio %.2f, total %.0f ms\n", c.name, len(sel), tot/len(sel), lvl, float64(d.Nanoseconds())/1e3/float64(len(sel)), float64(tot*3)/float64(n), float64(d.Microseconds())/1e3)
		}
	}
}
