package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
)

// progressSource is what the progress line reads; *crawl.Crawler has it.
type progressSource interface{ Progress() crawl.Progress }

// startProgress prints a live line to w once a second: on a terminal
// (mode "auto") it rewrites one line, with "always" on a pipe it prints a
// line each 5 seconds. The returned stop waits for the printer to exit and
// clears the line.
func startProgress(ctx context.Context, src progressSource, mode string, w io.Writer) (stop func()) {
	tty := isTerminal(w)
	if mode == "never" || (mode == "auto" && !tty) {
		return func() {}
	}
	every := time.Second
	if !tty {
		every = 5 * time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		var lastPages int64
		last := time.Now()
		for {
			select {
			case <-ctx.Done():
				if tty {
					fmt.Fprint(w, "\r\033[K")
				}
				return
			case now := <-t.C:
				p := src.Progress()
				rate := float64(p.Pages-lastPages) / now.Sub(last).Seconds()
				lastPages, last = p.Pages, now
				line := progressLine(p, rate)
				if tty {
					fmt.Fprint(w, "\r\033[K"+line)
				} else {
					fmt.Fprintln(w, line)
				}
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressLine is one line of progress. With nothing in flight it says
// what the crawl waits for: a crawl never sits silent.
func progressLine(p crawl.Progress, rate float64) string {
	line := fmt.Sprintf("%6s  pages %d  %.0f/s  queued %d  in flight %d  hosts ready %d waiting %d  errors %d",
		p.Elapsed.Round(time.Second), p.Pages, rate, p.Queued, p.InFlight, p.HostsReady, p.HostsWaiting, p.Errors)
	if p.LastError != "" {
		line += " (last " + p.LastError + ")"
	}
	if p.RevisitBytes > 0 {
		line += fmt.Sprintf("  dedup saved %.1f MiB", float64(p.RevisitBytes)/(1<<20))
	}
	switch {
	case p.Paused:
		line += "  paused by the operator"
	case p.InFlight == 0 && p.Waiting != "":
		line += "  waiting " + p.Waiting
	}
	return line
}
