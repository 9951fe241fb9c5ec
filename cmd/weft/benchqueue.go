package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-crawler/weft/internal/queuebench"
)

type queueBenchFlags struct {
	urls, hosts, workers, batch, restarts int
	dir, cpuProfile                       string
	keep, pages, reuse, noDrain           bool
}

// phaseReport is what a bench-queue-phase child prints: its result and
// when (Unix ns) its first URL was leased.
type phaseReport struct {
	URLs       int   `json:"urls"`
	ElapsedNS  int64 `json:"elapsed_ns"`
	FirstAtNS  int64 `json:"first_at_ns"`
	Duplicates int   `json:"duplicates"`
	InMemory   int   `json:"in_memory"`
	Active     int   `json:"active"`
	// restart: from the start of the phase to the store open, the
	// frontier made and the first lease
	OpenNS     int64 `json:"open_ns,omitempty"`
	FrontierNS int64 `json:"frontier_ns,omitempty"`
}

func newBenchQueueCmd() *cobra.Command {
	var f queueBenchFlags
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "Enqueue URLs over many hosts and drain them through the frontier, without fetching",
		Long: `Measures the crawl's durable queues at scale: a first process admits --urls
URLs spread over --hosts hosts through the seen set into the store, in
batches of --batch as a page's links are; a second process reopens that state,
as a restarted crawl would, and leases every URL, completing each as a
fetched page (queue entry deleted, URL record and host clock written) with no
delay between requests. Reports each phase's rate, peak RSS (getrusage), the
store's size on disk, and the time from the second process's start to its
first URL. Before the drain, --restarts more processes each reopen the state
and lease one URL (completing nothing), and report how long each step of the
restart took: the store open, the frontier, the first lease.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBenchQueue(cmd, f) },
	}
	fl := cmd.Flags()
	fl.IntVar(&f.urls, "urls", 10_000_000, "URLs to enqueue")
	fl.IntVar(&f.hosts, "hosts", 100_000, "hosts they are spread over")
	fl.IntVar(&f.workers, "workers", 8, "producers, then consumers")
	fl.IntVar(&f.batch, "batch", 100, "URLs per enqueue batch")
	fl.StringVar(&f.dir, "dir", "", "data directory (default: a temporary one)")
	fl.BoolVar(&f.keep, "keep", false, "keep the data directory")
	fl.BoolVar(&f.pages, "pages", false, "complete each lease as a crawled page (also rewrite the URL's record)")
	fl.IntVar(&f.restarts, "restarts", 3, "restarts to time before the drain (each reopens the state and leases one URL)")
	fl.BoolVar(&f.reuse, "reuse", false, "skip the enqueue: --dir holds the state of an earlier run with --keep (and the same --urls and --hosts)")
	fl.BoolVar(&f.noDrain, "no-drain", false, "stop after the restarts, leaving the state queued (with --keep, for --reuse)")
	return cmd
}

func runBenchQueue(cmd *cobra.Command, f queueBenchFlags) error {
	out := cmd.OutOrStdout()
	if f.urls <= 0 || f.hosts <= 0 {
		return usageError{fmt.Errorf("--urls and --hosts must be positive (got %d and %d)", f.urls, f.hosts)}
	}
	if f.reuse && f.dir == "" {
		return usageError{errors.New("--reuse needs --dir: the data directory of an earlier run with --keep")}
	}
	if f.restarts < 0 {
		return usageError{fmt.Errorf("--restarts %d: want 0 or more", f.restarts)}
	}
	dir := f.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "weft-bench-queue-")
		if err != nil {
			return err
		}
		dir = d
		if !f.keep {
			defer os.RemoveAll(dir)
		}
	}
	fmt.Fprintf(out, "weft bench queue: %d URLs over %d hosts, %d workers, batches of %d, in %s\n", f.urls, f.hosts, f.workers, f.batch, dir)
	args := []string{"--dir", dir, "--urls", strconv.Itoa(f.urls), "--hosts", strconv.Itoa(f.hosts),
		"--workers", strconv.Itoa(f.workers), "--batch", strconv.Itoa(f.batch)}
	if f.pages {
		args = append(args, "--pages")
	}

	enq := phaseReport{URLs: f.urls}
	if !f.reuse {
		var enqRSS int64
		var err error
		enq, enqRSS, _, err = runPhase(cmd, "enqueue", args)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "enqueue        %d URLs in %v: %.0f URLs/s, peak RSS %d MiB\n",
			enq.URLs, time.Duration(enq.ElapsedNS).Round(time.Millisecond), float64(enq.URLs)/time.Duration(enq.ElapsedNS).Seconds(), enqRSS>>20)
	}
	size := dirSize(filepath.Join(dir, "state"))
	fmt.Fprintf(out, "store on disk  %.1f MiB (%.0f B per URL)\n", float64(size)/(1<<20), float64(size)/float64(max(enq.URLs, 1)))
	for i := range f.restarts {
		r, rss, started, err := runPhase(cmd, "restart", args)
		if err != nil {
			return err
		}
		at := func(ns int64) time.Duration { return time.Unix(0, ns).Sub(started).Round(time.Millisecond) }
		fmt.Fprintf(out, "restart %d      first URL leased %v after the process started (store open %v, frontier %v), peak RSS %d MiB\n",
			i+1, at(r.FirstAtNS), at(r.OpenNS), at(r.FrontierNS), rss>>20)
	}
	if f.noDrain {
		return nil
	}

	dr, drRSS, started, err := runPhase(cmd, "drain", args)
	if err != nil {
		return err
	}
	first := time.Unix(0, dr.FirstAtNS).Sub(started)
	fmt.Fprintf(out, "restart        first URL leased %v after the process started\n", first.Round(time.Millisecond))
	fmt.Fprintf(out, "drain          %d URLs in %v: %.0f URLs/s, peak RSS %d MiB, %d leased twice\n",
		dr.URLs, time.Duration(dr.ElapsedNS).Round(time.Millisecond), float64(dr.URLs)/time.Duration(dr.ElapsedNS).Seconds(), drRSS>>20, dr.Duplicates)
	fmt.Fprintf(out, "frontier       at most %d URLs and %d active hosts in memory\n", dr.InMemory, dr.Active)
	if dr.URLs != enq.URLs || dr.Duplicates != 0 {
		return fmt.Errorf("bench: drained %d URLs (%d twice) of %d enqueued", dr.URLs, dr.Duplicates, enq.URLs)
	}
	return nil
}

// runPhase runs one phase in a child process and returns its report, its
// peak RSS in bytes and when it was started.
func runPhase(cmd *cobra.Command, phase string, args []string) (phaseReport, int64, time.Time, error) {
	exe, err := os.Executable()
	if err != nil {
		return phaseReport{}, 0, time.Time{}, err
	}
	child := exec.CommandContext(cmd.Context(), exe, append([]string{"bench-queue-phase", phase}, args...)...)
	var stdout bytes.Buffer
	child.Stdout = &stdout
	child.Stderr = cmd.ErrOrStderr()
	started := time.Now()
	if err := child.Run(); err != nil {
		return phaseReport{}, 0, started, fmt.Errorf("bench: %s phase: %w", phase, err)
	}
	var r phaseReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return phaseReport{}, 0, started, fmt.Errorf("bench: %s phase printed %q: %w", phase, stdout.String(), err)
	}
	var rss int64
	if ru, ok := child.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss << 10 // KiB on Linux
	}
	return r, rss, started, nil
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// newBenchQueuePhaseCmd runs one phase of bench queue; bench runs it as a
// child process and reads the JSON line it prints.
func newBenchQueuePhaseCmd() *cobra.Command {
	var f queueBenchFlags
	cmd := &cobra.Command{
		Use:    "bench-queue-phase enqueue|restart|drain",
		Short:  "One phase of bench queue (used by bench queue)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := queuebench.Bench{Dir: f.dir, URLs: f.urls, Hosts: f.hosts, Workers: f.workers, Batch: f.batch, Pages: f.pages}
			q.Progress = func(done int) { fmt.Fprintf(cmd.ErrOrStderr(), "  %s: %d URLs\n", args[0], done) }
			var (
				r   queuebench.Result
				err error
			)
			if f.cpuProfile != "" {
				stop, err := startCPUProfile(f.cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			start := time.Now()
			switch args[0] {
			case "enqueue":
				r, err = q.Enqueue(cmd.Context())
			case "drain":
				r, err = q.Drain(cmd.Context())
			case "restart":
				rs, err := q.Restart(cmd.Context())
				if err != nil {
					return err
				}
				return json.NewEncoder(cmd.OutOrStdout()).Encode(phaseReport{URLs: 1,
					OpenNS: start.Add(rs.Open).UnixNano(), FrontierNS: start.Add(rs.Frontier).UnixNano(), FirstAtNS: start.Add(rs.FirstURL).UnixNano()})
			default:
				return usageError{fmt.Errorf("unknown phase %q", args[0])}
			}
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(phaseReport{
				URLs: r.URLs, ElapsedNS: int64(r.Elapsed), FirstAtNS: start.Add(r.FirstURL).UnixNano(),
				Duplicates: r.Duplicates, InMemory: r.InMemory, Active: r.Active,
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", "", "data directory")
	fl.IntVar(&f.urls, "urls", 0, "URLs")
	fl.IntVar(&f.hosts, "hosts", 0, "hosts")
	fl.IntVar(&f.workers, "workers", 8, "workers")
	fl.IntVar(&f.batch, "batch", 100, "batch")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the phase to this file")
	fl.BoolVar(&f.pages, "pages", false, "complete leases as pages")
	return cmd
}
