package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-crawler/weft/internal/partition"
)

const benchParts = 64

// benchHosts returns n host names and their partitions.
func benchHosts(n int) ([]string, []uint16) {
	hosts := make([]string, n)
	parts := make([]uint16, n)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("www.host%05d.example", i)
		parts[i] = uint16(partition.Of(hosts[i], benchParts))
	}
	return hosts, parts
}

// benchItem is a queue item of about 120 encoded bytes.
func benchItem(host string, part uint16, i int) QueueItem {
	return QueueItem{
		URL:      fmt.Sprintf("https://%s/news/2026/11/%09d.html", host, i),
		Host:     host,
		Part:     part,
		Depth:    3,
		Priority: 1,
		Via:      "https://" + host + "/news/",
		Added:    t0.Add(time.Duration(i) * time.Second),
	}
}

func openBench(b *testing.B) *DB {
	b.Helper()
	db, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// pool pre-builds items so the benchmarks time the store, not fmt.
func pool(n int) []QueueItem {
	hosts, parts := benchHosts(1000)
	items := make([]QueueItem, n)
	for i := range items {
		h := i % len(hosts)
		items[i] = benchItem(hosts[h], parts[h], i)
	}
	return items
}

// cpuTime returns the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportItems reports throughput and, since the machine may be shared, the
// CPU time per item (all goroutines, compactions included): on a dedicated
// machine the commit path uses one core and compactions the other.
func reportItems(b *testing.B, items int, cpu0 time.Duration) {
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(items), "cpu-ns/item")
	b.ReportMetric(float64(items)/b.Elapsed().Seconds(), "items/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(items), "ns/item")
}

// BenchmarkPushFront enqueues batches of 1,000 items into a front queue,
// one Commit(false) per batch, on the real disk.
func BenchmarkPushFront(b *testing.B) {
	db := openBench(b)
	items := pool(1000)
	var seq uint64
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		batch := db.NewBatch()
		for i := range items {
			batch.PushFront(1, seq, items[i])
			seq++
		}
		if err := batch.Commit(false); err != nil {
			b.Fatal(err)
		}
	}
	reportItems(b, b.N*len(items), cpu0)
	b.ReportMetric(float64(len(appendItem(nil, &items[0], true))), "value-bytes")
}

// fillFront pushes n items to front queue 1 from seq 0.
func fillFront(b *testing.B, db *DB, n int) {
	b.Helper()
	items := pool(1000)
	for s := 0; s < n; {
		batch := db.NewBatch()
		for i := 0; i < 1000 && s < n; i++ {
			batch.PushFront(1, uint64(s), items[s%len(items)])
			s++
		}
		if err := batch.Commit(false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMoveFrontToQueue reads 1,000 items from the head of a front
// queue, deletes them and pushes each to its host's back queue, in one
// commit: the frontier's refill step.
func BenchmarkMoveFrontToQueue(b *testing.B) {
	db := openBench(b)
	fillFront(b, db, b.N*1000)
	tail := map[string]uint64{}
	var head uint64
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		es, err := db.FrontRange(1, head, 1000)
		if err != nil || len(es) != 1000 {
			b.Fatal(len(es), err)
		}
		batch := db.NewBatch()
		for _, e := range es {
			batch.DeleteFront(1, e.Seq)
			batch.PushQueue(e.Item.Part, e.Item.Host, tail[e.Item.Host], e.Item)
			tail[e.Item.Host]++
		}
		if err := batch.Commit(false); err != nil {
			b.Fatal(err)
		}
		head = es[len(es)-1].Seq + 1
	}
	reportItems(b, b.N*1000, cpu0)
}

// BenchmarkMoveAndComplete is a URL's whole life in the store after it was
// accepted: moved from the front queue to its host's queue (one commit per
// 1,000), then completed: its queue entry deleted, its URL record marked
// done and its host's clock written (one commit per 1,000). Reading a host's
// queue tail back is not per URL (the frontier refills heads in chunks):
// BenchmarkQueueRefill times it.
func BenchmarkMoveAndComplete(b *testing.B) {
	db := openBench(b)
	fillFront(b, db, b.N*1000)
	type hq struct{ head, tail uint64 }
	queues := map[string]*hq{}
	var head uint64
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		es, err := db.FrontRange(1, head, 1000)
		if err != nil || len(es) != 1000 {
			b.Fatal(len(es), err)
		}
		batch := db.NewBatch()
		for _, e := range es {
			q := queues[e.Item.Host]
			if q == nil {
				q = &hq{}
				queues[e.Item.Host] = q
			}
			batch.DeleteFront(1, e.Seq)
			batch.PushQueue(e.Item.Part, e.Item.Host, q.tail, e.Item)
			q.tail++
		}
		if err := batch.Commit(false); err != nil {
			b.Fatal(err)
		}
		head = es[len(es)-1].Seq + 1

		batch = db.NewBatch()
		for _, e := range es {
			it := e.Item
			q := queues[it.Host]
			batch.DeleteQueue(it.Part, it.Host, q.head)
			q.head++
			batch.PutURL(it.Part, it.Host, hashOf(it.URL), URLRecord{
				URL: it.URL, Depth: it.Depth, Priority: it.Priority, Status: URLDone,
				LastStatus: 200, LastOutcome: "ok", LastFetch: t0, NextCrawl: t0.Add(24 * time.Hour),
			})
			batch.PutHost(it.Part, HostRecord{Host: it.Host, NextAt: t0.Add(time.Second), Accepted: int64(q.tail)})
		}
		if err := batch.Commit(false); err != nil {
			b.Fatal(err)
		}
	}
	reportItems(b, b.N*1000, cpu0)
}

// BenchmarkQueueRefill reads the next 64 entries of a host's back queue
// (from its head, past the tombstones of consumed entries), in a store of
// 1,000 hosts with 200 queued URLs each, half of them consumed.
func BenchmarkQueueRefill(b *testing.B) {
	db := openBench(b)
	hosts, parts := benchHosts(1000)
	const per = 200
	for h := range hosts {
		batch := db.NewBatch()
		for s := range per {
			batch.PushQueue(parts[h], hosts[h], uint64(s), benchItem(hosts[h], parts[h], s))
		}
		for s := range per / 2 {
			batch.DeleteQueue(parts[h], hosts[h], uint64(s))
		}
		if err := batch.Commit(false); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		h := (i * 7919) % len(hosts)
		es, err := db.QueueRange(parts[h], hosts[h], per/2, 64)
		if err != nil || len(es) != 64 {
			b.Fatal(len(es), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*64), "ns/item")
}

type urlRef struct {
	host int
	hash [16]byte
}

// fillURLs writes n URL records over the hosts, in batches of 10,000, and
// returns what it wrote.
func fillURLs(b *testing.B, db *DB, hosts []string, parts []uint16, n int, rng *rand.Rand) []urlRef {
	b.Helper()
	refs := make([]urlRef, n)
	for i := 0; i < n; {
		batch := db.NewBatch()
		for j := 0; j < 10_000 && i < n; j++ {
			h := rng.IntN(len(hosts))
			var hash [16]byte
			binary.LittleEndian.PutUint64(hash[:], rng.Uint64())
			binary.LittleEndian.PutUint64(hash[8:], rng.Uint64())
			refs[i] = urlRef{h, hash}
			batch.PutURL(parts[h], hosts[h], hash, URLRecord{
				URL:    fmt.Sprintf("https://%s/news/2026/11/%09d.html", hosts[h], i),
				Depth:  3,
				Status: URLQueued,
			})
			i++
		}
		if err := batch.Commit(false); err != nil {
			b.Fatal(err)
		}
	}
	return refs
}

// BenchmarkHasURL looks up URLs in a store of one million URL records
// (10,000 hosts, random hashes) with the default options: a 64 MiB cache and
// 10-bit bloom filters.
func BenchmarkHasURL(b *testing.B) {
	db := openBench(b)
	hosts, parts := benchHosts(10_000)
	rng := rand.New(rand.NewPCG(1, 1))
	start := time.Now()
	refs := fillURLs(b, db, hosts, parts, 1_000_000, rng)
	if err := db.Flush(); err != nil {
		b.Fatal(err)
	}
	b.Logf("inserted %d URL records in %v", len(refs), time.Since(start))
	b.Logf("%s", db.pdb.Metrics())

	b.Run("hit", func(b *testing.B) {
		for i := range b.N {
			r := refs[(i*7919)%len(refs)]
			has, err := db.HasURL(parts[r.host], hosts[r.host], r.hash)
			if err != nil || !has {
				b.Fatal("miss on a stored URL", err)
			}
		}
	})
	b.Run("miss", func(b *testing.B) {
		for i := range b.N {
			r := refs[(i*7919)%len(refs)]
			r.hash[15] ^= 0xa5
			has, err := db.HasURL(parts[r.host], hosts[r.host], r.hash)
			if err != nil || has {
				b.Fatal("hit on an absent URL", err)
			}
		}
	})
}

// BenchmarkDiskPerMillionQueued reports the disk size of one million URLs
// in the queued state (a URL record and a back-queue entry each, over 10,000
// hosts with their host records), after a full compaction.
func BenchmarkDiskPerMillionQueued(b *testing.B) {
	const n = 1_000_000
	for range b.N {
		dir := b.TempDir()
		db, err := Open(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		hosts, parts := benchHosts(10_000)
		tails := make([]uint64, len(hosts))
		for i := 0; i < n; {
			batch := db.NewBatch()
			for j := 0; j < 10_000 && i < n; j++ {
				h := i % len(hosts)
				it := benchItem(hosts[h], parts[h], i)
				batch.PushQueue(parts[h], hosts[h], tails[h], it)
				tails[h]++
				batch.PutURL(parts[h], hosts[h], hashOf(it.URL), URLRecord{URL: it.URL, Depth: it.Depth, Priority: it.Priority, Status: URLQueued})
				i++
			}
			if err := batch.Commit(false); err != nil {
				b.Fatal(err)
			}
		}
		batch := db.NewBatch()
		for h := range hosts {
			batch.PutHost(parts[h], HostRecord{Host: hosts[h], Accepted: int64(tails[h]), NextAt: t0})
		}
		if err := batch.Commit(true); err != nil {
			b.Fatal(err)
		}
		live, err := db.DiskSize()
		if err != nil {
			b.Fatal(err)
		}
		if err := db.pdb.Compact(context.Background(), []byte{0}, []byte{0xff}, true); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		// What is left on disk once obsolete files are gone.
		entries, err := os.ReadDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		var compacted int64
		for _, e := range entries {
			if fi, err := e.Info(); err == nil {
				compacted += fi.Size()
			}
		}
		b.ReportMetric(float64(live)/n, "bytes/URL-as-written")
		b.ReportMetric(float64(compacted)/n, "bytes/URL")
		b.ReportMetric(float64(compacted)/(1<<20), "MiB/million")
	}
}

// BenchmarkQueueChurn measures reads of a front queue after a million
// push/consume cycles, consuming with point deletions (what the store does)
// and, for comparison, with a range deletion per consumed batch.
func BenchmarkQueueChurn(b *testing.B) {
	for _, mode := range []string{"point", "rangedel"} {
		db := openBench(b)
		items := pool(1000)
		var head, tail uint64
		start := time.Now()
		for c := range 1000 {
			batch := db.NewBatch()
			for i := range items {
				batch.PushFront(1, tail, items[i])
				tail++
			}
			if c > 0 {
				es, err := db.FrontRange(1, head, 1000)
				if err != nil || len(es) != 1000 {
					b.Fatal(len(es), err)
				}
				last := es[len(es)-1].Seq
				if mode == "point" {
					for _, e := range es {
						batch.DeleteFront(1, e.Seq)
					}
				} else if err := db.pdb.DeleteRange(appendFrontKey(nil, 1, head), appendFrontKey(nil, 1, last+1), pebble.NoSync); err != nil {
					b.Fatal(err)
				}
				head = last + 1
			}
			if err := batch.Commit(false); err != nil {
				b.Fatal(err)
			}
		}
		b.Logf("%s: 1M pushes and consumes in %v", mode, time.Since(start))
		b.Run(mode+"/FrontRange-from-head", func(b *testing.B) {
			for range b.N {
				if es, err := db.FrontRange(1, head, 100); err != nil || len(es) != 100 {
					b.Fatal(len(es), err)
				}
			}
		})
		b.Run(mode+"/LastFrontSeq", func(b *testing.B) {
			for range b.N {
				if _, ok, err := db.LastFrontSeq(1); err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		})
		b.Run(mode+"/FrontRange-from-0", func(b *testing.B) {
			for range b.N {
				if es, err := db.FrontRange(1, 0, 100); err != nil || len(es) != 100 {
					b.Fatal(len(es), err)
				}
			}
		})
		// Drain the queue: the last-seq lookup of an empty queue has only
		// tombstones to look at.
		batch := db.NewBatch()
		for s := head; s < tail; s++ {
			if mode == "point" {
				batch.DeleteFront(1, s)
			}
		}
		if mode == "rangedel" {
			if err := db.pdb.DeleteRange(appendFrontKey(nil, 1, head), appendFrontKey(nil, 1, tail), pebble.NoSync); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Commit(false); err != nil {
			b.Fatal(err)
		}
		b.Run(mode+"/LastFrontSeq-drained", func(b *testing.B) {
			for range b.N {
				if _, ok, err := db.LastFrontSeq(1); err != nil || ok {
					b.Fatal(ok, err)
				}
			}
		})
		b.Run(mode+"/FrontRange-drained-from-head", func(b *testing.B) {
			for range b.N {
				if es, err := db.FrontRange(1, tail, 100); err != nil || len(es) != 0 {
					b.Fatal(len(es), err)
				}
			}
		})
	}
}

// BenchmarkSmallCommits commits one URL per batch (a URL record and a queue
// entry), as a crawler that records each discovered link at once does, from
// one goroutine and from 8.
func BenchmarkSmallCommits(b *testing.B) {
	for _, par := range []int{1, 8} {
		b.Run(fmt.Sprintf("goroutines=%d", par), func(b *testing.B) {
			db := openBench(b)
			items := pool(1000)
			var seq atomic.Uint64
			b.SetParallelism(par) // times GOMAXPROCS
			if par == 1 {
				b.SetParallelism(1)
			}
			cpu0 := cpuTime()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					s := seq.Add(1)
					it := items[s%uint64(len(items))]
					batch := db.NewBatch()
					batch.PutURL(it.Part, it.Host, hashOf(fmt.Sprint(s)), URLRecord{URL: it.URL, Status: URLQueued})
					batch.PushQueue(it.Part, it.Host, s, it)
					if err := batch.Commit(false); err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportItems(b, b.N, cpu0)
		})
	}
}
