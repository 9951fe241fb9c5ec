package synthweb

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"time"
)

// AuditReport judges a crawl's politeness from the servers' side: what the
// request log says, not what the crawler believes it did.
type AuditReport struct {
	Requests  int           // requests (and silent-host connections) received
	Hosts     int           // hosts that received any
	MinGap    time.Duration // shortest start-to-start gap seen on any host
	Overlaps  []string      // a request that started before the previous one to its host ended
	ShortGaps []string      // start-to-start gap below max(delay, the host's Crawl-delay)
	// ShortRests are requests that started less than max(delay, the
	// host's Crawl-delay) after the previous one's handler really ended,
	// where that handler went on after its client had left (Abandoned):
	// the server was still busy with a request its client had given up.
	// (An ordinary handler may return a moment after its client has read
	// the whole answer, so its End is not a rest's start.)
	ShortRests     []string
	RobotsNotFirst []string // a host whose first request was not for robots.txt
}

// Breaches lists every breach of politeness the audit found: overlaps,
// short gaps and short rests.
func (r AuditReport) Breaches() []string {
	return slices.Concat(r.Overlaps, r.ShortGaps, r.ShortRests)
}

// OK reports whether the crawl was polite.
func (r AuditReport) OK() bool {
	return len(r.Overlaps) == 0 && len(r.ShortGaps) == 0 && len(r.ShortRests) == 0 && len(r.RobotsNotFirst) == 0
}

// Audit reads the request log of w and checks every host: no two requests
// in flight at once, no start-to-start gap shorter than max(delay, the
// host's Crawl-delay), nor any rest from the end of a handler that went on
// after its client left, and robots.txt requested before anything else.
// Requests that are part of a robots.txt redirect chain count as robots.txt.
func Audit(w *Web, delay time.Duration) AuditReport {
	hosts := map[string]HostInfo{}
	for _, h := range w.Hosts() {
		hosts[h.Addr] = h
	}
	per := map[string][]Request{}
	var rep AuditReport
	for _, r := range w.Log() {
		per[r.Addr] = append(per[r.Addr], r)
		rep.Requests++
	}
	rep.Hosts = len(per)
	rep.MinGap = -1
	addrs := make([]string, 0, len(per))
	for a := range per {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	for _, addr := range addrs {
		reqs := per[addr]
		h := hosts[addr]
		name := h.Name
		if name == "" {
			name = addr
		}
		sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].Start.Before(reqs[j].Start) })
		if first := reqs[0]; first.Method != "" && !isRobotsRequest(first.Path) {
			rep.RobotsNotFirst = append(rep.RobotsNotFirst, fmt.Sprintf("%s: first request %s", name, first.Path))
		}
		want := max(delay, h.CrawlDelay)
		for i := 1; i < len(reqs); i++ {
			prev, cur := reqs[i-1], reqs[i]
			switch rest := cur.Start.Sub(prev.End); {
			case prev.End.IsZero() || rest < 0:
				rep.Overlaps = append(rep.Overlaps, fmt.Sprintf("%s: %s started while %s was in flight", name, cur.Path, prev.Path))
			case prev.Abandoned && rest < want:
				rep.ShortRests = append(rep.ShortRests, fmt.Sprintf("%s: %s started %v after the handler of %s ended; want at least %v", name, cur.Path, rest, prev.Path, want))
			}
			gap := cur.Start.Sub(prev.Start)
			if rep.MinGap < 0 || gap < rep.MinGap {
				rep.MinGap = gap
			}
			if gap < want {
				rep.ShortGaps = append(rep.ShortGaps, fmt.Sprintf("%s: %s started %v after %s; want at least %v", name, cur.Path, gap, prev.Path, want))
			}
		}
	}
	if rep.MinGap < 0 {
		rep.MinGap = 0
	}
	return rep
}

// isRobotsRequest reports whether path is robots.txt or a hop of one of the
// web's robots.txt redirect chains (all of which live under /robots).
func isRobotsRequest(path string) bool {
	return len(path) >= len("/robots") && path[:len("/robots")] == "/robots"
}

// Write prints the report for a person.
func (r AuditReport) Write(w io.Writer) {
	fmt.Fprintf(w, "what the servers saw: %d requests to %d hosts\n", r.Requests, r.Hosts)
	verdict := func(n int) string {
		if n == 0 {
			return "none"
		}
		return fmt.Sprint(n)
	}
	fmt.Fprintf(w, "  overlapping requests to one host:     %s\n", verdict(len(r.Overlaps)))
	fmt.Fprintf(w, "  gaps shorter than the host's delay:   %s (shortest gap seen %v)\n", verdict(len(r.ShortGaps)), r.MinGap.Round(time.Millisecond))
	fmt.Fprintf(w, "  rests shorter than the host's delay:  %s (from each handler's real end)\n", verdict(len(r.ShortRests)))
	fmt.Fprintf(w, "  hosts asked for a page before robots: %s\n", verdict(len(r.RobotsNotFirst)))
	for _, list := range [][]string{r.Overlaps, r.ShortGaps, r.ShortRests, r.RobotsNotFirst} {
		for i, s := range list {
			if i == 5 {
				fmt.Fprintf(w, "    ... and %d more\n", len(list)-5)
				break
			}
			fmt.Fprintf(w, "    %s\n", s)
		}
	}
}
