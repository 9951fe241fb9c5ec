package store

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// crashBatch writes batch i: per front entries at seqs [i*per, (i+1)*per),
// a URL record for each, and meta "last" = i. A store is consistent when
// every batch 1..last is whole and nothing of a later batch is there.
func crashBatch(db *DB, i uint64, per int) *Batch {
	b := db.NewBatch()
	for j := range per {
		seq := i*uint64(per) + uint64(j)
		it := item("crash.test", 5, int(seq))
		b.PushFront(0, seq, it)
		b.PutURL(5, "crash.test", hashOf(it.URL), URLRecord{URL: it.URL, Status: URLQueued})
	}
	b.PutMeta("last", binary.BigEndian.AppendUint64(nil, i))
	return b
}

// checkConsistent verifies the invariant of crashBatch and returns last.
func checkConsistent(t *testing.T, db *DB, per int) uint64 {
	t.Helper()
	var last uint64
	if v, ok, err := db.GetMeta("last"); err != nil {
		t.Fatal(err)
	} else if ok {
		last = binary.BigEndian.Uint64(v)
	}
	es, err := db.FrontRange(0, 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	// Batch 0 is never written, so a store with last batches holds exactly
	// the seqs [per, (last+1)*per).
	if want := int(last) * per; len(es) != want {
		t.Fatalf("meta says %d batches were committed, so %d front entries; found %d (a batch is partially present)", last, want, len(es))
	}
	for k, e := range es {
		if want := uint64(per + k); e.Seq != want {
			t.Fatalf("front entry %d has seq %d, want %d", k, e.Seq, want)
		}
		if has, err := db.HasURL(5, "crash.test", hashOf(e.Item.URL)); !has || err != nil {
			t.Fatalf("url of front entry %d missing (%v): batch partially present", e.Seq, err)
		}
	}
	urls := 0
	if err := db.ScanURLs(5, func(string, [16]byte, URLRecord) bool { urls++; return true }); err != nil {
		t.Fatal(err)
	}
	if urls != len(es) {
		t.Fatalf("%d url records for %d front entries: a batch is partially present", urls, len(es))
	}
	// The queue count, written in the batches, says as much.
	if q, ok := db.Queued(); !ok || q != int64(len(es)) {
		t.Fatalf("queue count %d (known %v) after the restart, %d entries on disk", q, ok, len(es))
	}
	return last
}

// TestCrashCloneMem uses pebble's crashable MemFS, whose CrashClone keeps
// only what was synced (plus, if asked, a random part of what was not), to
// model losing the page cache.
func TestCrashCloneMem(t *testing.T) {
	// Small batches: with 20 URLs a batch of version 5's URL records
	// (about 80 KB in all) pebble synced more of its WAL than the synced
	// batch on its own, and the clone kept it, which the check of "only
	// what was synced" takes for a sync that should not have been.
	const per = 10
	fs := vfs.NewCrashableMem()
	db, err := Open("/db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	if err := crashBatch(db, 1, per).Commit(true); err != nil {
		t.Fatal(err)
	}
	for i := uint64(2); i <= 40; i++ {
		if err := crashBatch(db, i, per).Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	onlySynced := fs.CrashClone(vfs.CrashCloneCfg{})
	var partial []*vfs.MemFS
	for seed := range uint64(6) {
		partial = append(partial, fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rand.New(rand.NewPCG(seed, 1))}))
	}
	// A synced commit makes every earlier batch durable too: the WAL is one
	// ordered file.
	if err := crashBatch(db, 41, per).Commit(true); err != nil {
		t.Fatal(err)
	}
	afterSync := fs.CrashClone(vfs.CrashCloneCfg{})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = nil

	reopen := func(fs vfs.FS) uint64 {
		t.Helper()
		db, err := Open("/db", &Options{FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		return checkConsistent(t, db, per)
	}
	if last := reopen(onlySynced); last != 1 {
		t.Errorf("after losing unsynced data: last batch %d, want 1 (the synced one; none of the unsynced)", last)
	}
	for k, c := range partial {
		last := reopen(c)
		if last < 1 || last > 40 {
			t.Errorf("partial clone %d: last batch %d, want within [1, 40]", k, last)
		}
		t.Logf("partial clone %d kept batches 1..%d", k, last)
	}
	if last := reopen(afterSync); last != 41 {
		t.Errorf("after a synced commit: last batch %d, want 41", last)
	}
}

const crashChildEnv = "WEFT_STORE_CRASH_CHILD_DIR"

// TestProcessCrashChild is the child of TestProcessCrash: it commits numbered
// batches as fast as it can with NoSync, printing each number once Commit
// has returned, until it is killed.
func TestProcessCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("helper process for TestProcessCrash")
	}
	db, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	last := checkConsistent(t, db, crashPer)
	deadline := time.Now().Add(time.Minute) // in case the parent is gone
	for i := last + 1; time.Now().Before(deadline); i++ {
		if err := crashBatch(db, i, crashPer).Commit(false); err != nil {
			t.Fatal(err)
		}
		// os.Stdout is unbuffered: one write per number.
		fmt.Fprintf(os.Stdout, "%d\n", i)
	}
	db.Close()
}

const crashPer = 25

// TestProcessCrash kills a process that is committing batches with SIGKILL
// at a random moment, several times over the same store, and checks after
// each kill that every batch the child saw committed is there and that no
// batch is partially there.
func TestProcessCrash(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	var prevLast uint64
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestProcessCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		started := make(chan struct{})
		done := make(chan uint64)
		go func() {
			var maxSeen uint64
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				n, err := strconv.ParseUint(sc.Text(), 10, 64)
				if err != nil {
					continue // the test framework's own output
				}
				if maxSeen == 0 {
					close(started)
				}
				maxSeen = max(maxSeen, n)
			}
			done <- maxSeen
		}()
		select {
		case <-started:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("child printed nothing within a minute")
		}
		kill := time.Duration(50+rng.IntN(400)) * time.Millisecond
		<-time.After(kill)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		printed := <-done
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("child did not die of SIGKILL: %v", err)
		}

		db, err := Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		last := checkConsistent(t, db, crashPer)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		// The child may have committed one batch it did not get to print.
		if last < printed || last > printed+1 {
			t.Fatalf("round %d: child printed up to batch %d; store holds up to %d", round, printed, last)
		}
		if printed <= prevLast {
			t.Fatalf("round %d: child committed nothing new", round)
		}
		t.Logf("round %d: killed after %v, %d batches printed, %d in store", round, kill, printed, last)
		prevLast = last
	}
}
