// Package report holds what a crawl tells its operator: the summary of a
// finished crawl, the progress line's snapshot, and how each is written
// for a person.
package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/live"
	"github.com/weft-crawler/weft/internal/seeds"
)

// Progress is a cheap snapshot for a live progress line.
type Progress struct {
	Elapsed      time.Duration
	Pages        int64
	Errors       int64
	Queued       int
	InFlight     int
	HostsReady   int
	HostsWaiting int
	// LastError is the last request that got no response: "host: kind".
	LastError string
	// Waiting says what the crawl waits for when no host is ready
	// (frontier.Wait.Text), "" when a host is ready or nothing is queued;
	// Paused that the operator paused it.
	Waiting string
	Paused  bool
	// RevisitBytes are the payload bytes archived as revisits, of this
	// crawl's captures or earlier crawls': not stored again.
	RevisitBytes int64
}

// Summary is what a finished crawl did.
type Summary struct {
	StoppedBy          string           `json:"stopped_by"` // "drained", "deferred" (drained but for hosts held back by failures, see Deferred), "max-pages", "interrupted", "failed" (see the error) or "stopped"
	Elapsed            time.Duration    `json:"-"`
	Pages              int64            `json:"pages"`                 // page requests that got a response (what --max-pages counts)
	RequisiteFetches   int64            `json:"requisite_fetches"`     // requisite requests that got a response (--max-requisites counts them and sitemaps)
	SitemapFetches     int64            `json:"sitemap_fetches"`       // sitemap requests that got a response
	RobotsFetches      int64            `json:"robots_fetches"`        // robots.txt requests
	Bytes              int64            `json:"bytes"`                 // body bytes received
	Truncated          int64            `json:"truncated"`             // responses cut by a cap or a timeout
	Revisits           int64            `json:"revisits"`              // responses whose payload was already archived: revisit records
	NearDups           int64            `json:"near_dups"`             // pages that were near-duplicates of an earlier page
	NotModified        int64            `json:"not_modified"`          // 304s to conditional requests (continuous mode)
	Recrawls           int64            `json:"recrawls"`              // URLs queued again when their next crawl came (continuous mode)
	ListedChanged      int64            `json:"listed_changed"`        // URLs queued again early: a sitemap's <lastmod> is after their last fetch
	ListedDropped      int64            `json:"listed_dropped"`        // sitemap hints about known URLs dropped: too many waited for a scan
	RevisitBytes       int64            `json:"revisit_bytes"`         // their payload bytes, not stored again
	EarlierRevisits    int64            `json:"earlier_revisits"`      // of Revisits, those of a capture in an earlier crawl (Config.DedupFrom)
	EarlierBytes       int64            `json:"earlier_revisit_bytes"` // their payload bytes, not stored again
	DedupImported      int64            `json:"dedup_imported"`        // payload digests known from earlier crawls (Config.DedupFrom)
	Rendered           int64            `json:"rendered"`              // exchanges archived as parsed, not as the bytes sent, which no WARC record could hold
	Requisites         int64            `json:"requisites"`            // requisites found on pages and style sheets (unless Config.NoRequisites; WithImages)
	RequisitesQueued   int64            `json:"requisites_queued"`     // of which new to the crawl, and queued
	RequisitesArchived int64            `json:"requisites_archived"`   // requisites fetched, answered 2xx and archived
	OverDecodeCap      int64            `json:"over_decode_cap"`       // bodies whose decompressed size passed the cap (not parsed past it)
	BadEncoding        int64            `json:"bad_encoding"`          // bodies whose Content-Encoding could not be undone
	Binary             int64            `json:"binary"`                // bodies labelled as text that were binary: archived, not parsed
	Charsets           map[string]int64 `json:"charsets"`              // documents whose charset label was unknown, whose UTF-8 was invalid, or that were converted to UTF-8 (content.Charset*)
	RedirectSeen       int64            `json:"redirect_seen"`         // redirects to a URL already seen: loops, or pages reached another way
	Requeued           int64            `json:"requeued"`              // URLs queued again when in-links raised their importance (the copy leased after the fetch is dropped, counted as rejected "requeued")
	Forwarded          int64            `json:"forwarded"`             // URLs handed to the nodes that own their hosts (Cluster.Owns)
	RobotsCut          int64            `json:"robots_cut"`            // robots.txt files over robots.MaxBytes: only their first 500 KiB read
	ByStatus           map[string]int64 `json:"by_status"`             // page responses by status class ("2xx", ...)
	Errors             map[string]int64 `json:"errors"`                // requests without a response (pages and robots.txt), by kind
	Rejected           map[string]int64 `json:"rejected"`              // discovered URLs not queued, by reason
	Held               map[string]int64 `json:"held_past_trap_budget"` // discovered URLs queued at the lowest priority, held by the trap budget (past a family's budget, into a family of copies or of closed pages, setting a barren parameter), by reason (judge.HeldQuery, judge.HeldDate, judge.HeldPath, judge.HeldCopies, judge.HeldBarren)
	Released           int64            `json:"held_released"`         // URLs held (by this run or an earlier one) queued as usual since, their family's budget having grown as its pages showed their worth
	Handled            map[string]int64 `json:"handled"`               // responses read, by content handler ("html", "text", "sitemap", "image")
	Archived           map[string]int64 `json:"archived"`              // 2xx responses archived, by media type (at most 64 types, the rest "other")
	Refused            map[string]int64 `json:"refused"`               // responses whose body the media policy refused (not read), by media type
	Unreadable         map[string]int64 `json:"unreadable"`            // of which read only in part (malformed), by handler
	Cut                map[string]int64 `json:"cut"`                   // of which cut at a limit (a sitemap past 50,000 URLs or 50 MB, a page past MaxLinksPerPage links), by handler
	Extended           map[string]int64 `json:"extended"`              // documents extensions read (Config.Extensions), by extension
	ExtensionFailed    map[string]int64 `json:"extension_failed"`      // of which the extension failed on (an error, a timeout, a crash), by extension
	LinksCut           int64            `json:"links_cut"`             // HTML pages cut at MaxLinksPerPage: their later links not read
	LinksCutHosts      map[string]int64 `json:"links_cut_hosts"`       // of which per host, for the 20 hosts with the most
	Robots             map[string]int64 `json:"robots"`                // robots.txt fetch outcomes: rules, no-rules, disallow-all (each retry counts)
	RobotsHops         int64            `json:"robots_hops"`           // robots.txt redirect hops followed
	Policies           int              `json:"policies"`              // hosts with an operator policy when the crawl ended
	RobotsRetries      int64            `json:"robots_retries"`        // failed robots.txt fetches retried later, the host's URLs kept
	RobotsLastGood     int64            `json:"robots_last_good"`      // unreachable robots.txt files replaced by the last good copy, or by none (RobotsLastGood)
	HostsDown          map[string]int64 `json:"hosts_down"`            // hosts not crawled for their robots.txt (failed, or a Crawl-delay over the most), by cause
	HostsDownNamed     []HostCause      `json:"hosts_down_named"`      // of which the first, with what failed
	NoIndex            int64            `json:"no_index"`              // pages that asked not to be indexed (still archived)
	NoFollow           int64            `json:"no_follow"`             // pages whose links were not followed on their request
	Throttled          int64            `json:"throttled"`             // 429 responses (robots.txt included): the host backed off
	Unavailable        int64            `json:"unavailable"`           // 503 responses: backed off, and counted as failures
	Strained           int64            `json:"strained"`              // requests cut by a timeout, a reset or a silence: the host and its server waited the latency factor times as long
	Retried            int64            `json:"retried"`               // URLs queued to be asked once more when a timeout, a failed connection or a 500, 502 or 504 answer was their first failure
	Parks              int64            `json:"parks"`                 // times a host was parked after failures in a row
	GaveUp             int64            `json:"gave_up"`               // hosts given up after too many failures
	GaveUpHosts        []string         `json:"gave_up_hosts"`         // the first of them
	Traps              int64            `json:"traps"`                 // hosts and directories cut off: most of their last pages were near-duplicates
	TrapHosts          []string         `json:"trap_hosts"`            // the first of them: a host, or a host and a directory (a.test/day/, git.test/alice/app/ token@5)
	TrapCosts          []judge.TrapCost `json:"trap_costs"`            // the hosts trap rules (pattern, repeats, depth, host-cap, trap) refused most URLs of, and what each cost
	TrapHostCount      int64            `json:"trap_host_count"`       // hosts any trap rule refused URLs of
	Queued             int              `json:"queued"`                // URLs left queued or in flight that this run knew of (after a restart, not those of the earlier run it never read)
	SitemapsLater      int64            `json:"sitemaps_later"`        // sitemap leases put off because the crawl had found as many pages as its page cap left it to fetch
	InertParamHosts    int              `json:"inert_param_hosts"`     // hosts with a query parameter learnt inert: their links are queued without it
	InertParams        []string         `json:"inert_params"`          // the first of those parameters, each as "host: name"
	OffsiteRedirectors int              `json:"offsite_redirectors"`   // URL shapes learnt to redirect out of the crawl's scope (click trackers): their URLs not asked for
	Seeds              int              `json:"seeds"`                 // seeds given (Config.Seeds)
	SeedsFetched       int              `json:"seeds_fetched"`         // of which got a response, in this run or an earlier one on the directory
	SeedsNotFetched    int              `json:"seeds_not_fetched"`     // of which did not
	SeedFailures       []SeedFailure    `json:"seed_failures"`         // of which the first, each with why and what would let it be fetched
	SeedStatus         []seeds.Status   `json:"seed_status"`           // the first MaxSeedStatus seeds (given, then added through the API): state (running, done, limit, failing: package seeds), pages, bytes, errors
	SeedTotals         seeds.Totals     `json:"seed_totals"`           // every seed's counts and states summed
	Deferred           int64            `json:"deferred"`              // with StoppedBy "deferred": the URLs left queued, every one waiting on a host held back by failures
	DeferredHosts      []DeferredHost   `json:"deferred_hosts"`        // of which the hosts with the most
	DeferredHostCount  int              `json:"deferred_host_count"`   // hosts with URLs deferred
	Resumed            bool             `json:"resumed"`               // the crawl continued one found under DataDir
	ResumedURLs        int64            `json:"resumed_urls"`          // URLs that crawl had accepted
	ResumedQueue       int64            `json:"resumed_queue"`         // URLs the earlier run left queued that this one read back (leases out at a crash included)
	WARCRecovered      int              `json:"warc_recovered"`        // torn WARC files from a crash cut back to their last whole record
	WARCFiles          []string         `json:"warc_files"`
	WARCBytes          int64            `json:"warc_bytes"`
	WARCUploads        *archive.Uploads `json:"warc_uploads"`         // finished WARC files moved to the object store; nil without one
	SeenFalsePos       int64            `json:"seen_false_positives"` // Bloom filter false positives caught by the exact store
	Browser            *RenderSummary   `json:"browser"`              // what rendering did; nil when it was not asked for
}

// MarshalJSON writes the summary with the keys of its fields' tags, and
// Elapsed as elapsed_seconds, a number of seconds, as GET /v1/stats gives
// it. Live, which embeds a Summary, takes this method as its own: marshal
// a Live's parts, not the Live.
func (s Summary) MarshalJSON() ([]byte, error) {
	type fields Summary // the tags, without this method
	return WithElapsed(s.Elapsed, fields(s))
}

// WithElapsed writes v, a struct, as JSON with elapsed first as
// elapsed_seconds, a number of seconds: the way every summary of weft
// writes its Elapsed (which its tag leaves out).
func WithElapsed(elapsed time.Duration, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(b) < 2 || b[0] != '{' {
		return b, err
	}
	out := strconv.AppendFloat([]byte(`{"elapsed_seconds":`), elapsed.Seconds(), 'g', -1, 64)
	if len(b) > 2 { // not {}
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Summary) UnmarshalJSON(b []byte) error {
	type fields Summary
	var v struct {
		ElapsedSeconds float64 `json:"elapsed_seconds"`
		fields
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Summary(v.fields)
	s.Elapsed = time.Duration(v.ElapsedSeconds * float64(time.Second))
	return nil
}

// PagesPerSecond is the crawl's average rate.
func (s Summary) PagesPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Pages) / s.Elapsed.Seconds()
}

// Write prints the summary for a person.
func (s Summary) Write(w io.Writer) {
	fmt.Fprintf(w, "crawl %s after %v: %d pages (%.1f/s), %d requisites, %d sitemaps, %d robots.txt, %s received, %d truncated\n",
		s.StoppedBy, s.Elapsed.Round(time.Millisecond), s.Pages, s.PagesPerSecond(), s.RequisiteFetches, s.SitemapFetches, s.RobotsFetches, byteSize(s.Bytes), s.Truncated)
	if s.Resumed {
		fmt.Fprintf(w, "  resumed:    %d URLs known, %d queued ones taken up again", s.ResumedURLs, s.ResumedQueue)
		if s.WARCRecovered > 0 {
			fmt.Fprintf(w, "; %d torn WARC files cut back to their last whole record", s.WARCRecovered)
		}
		fmt.Fprintln(w)
	}
	if s.SeedsNotFetched > 0 {
		fmt.Fprintf(w, "  seeds:      %d given, %d fetched, %d not:\n", s.Seeds, s.SeedsFetched, s.SeedsNotFetched)
		for _, f := range s.SeedFailures {
			fmt.Fprintf(w, "    %s  %s", f.URL, f.Reason)
			if f.Detail != "" {
				fmt.Fprintf(w, ": %s", f.Detail)
			}
			if f.Hint != "" {
				fmt.Fprintf(w, " (%s allows it)", f.Hint)
			}
			fmt.Fprintln(w)
		}
		if more := s.SeedsNotFetched - len(s.SeedFailures); more > 0 {
			fmt.Fprintf(w, "    ... and %d more\n", more)
		}
	}
	if t := s.SeedTotals; t.WithOptions > 0 || t.Limit > 0 {
		fmt.Fprintf(w, "  per seed:   %d seeds (%d with limits of their own): %d done, %d running, %d at their limit, %d failing; %d pages past a seed's budget not fetched\n",
			t.Seeds, t.WithOptions, t.Done, t.Running, t.Limit, t.Failing, t.Dropped)
		shown := 0
		for _, st := range s.SeedStatus {
			if (st.State == seeds.Limit || st.State == seeds.Failing || !st.Opts.IsZero()) && shown < maxSeedLines {
				fmt.Fprintf(w, "    %s  %s: %d pages, %s, %d errors\n", st.URL, st.State, st.Pages, byteSize(st.Bytes), st.Errors)
				shown++
			}
		}
	}
	fmt.Fprintf(w, "  responses:  %s\n", joinCounts(s.ByStatus))
	if len(s.Archived) > 0 {
		fmt.Fprintf(w, "  archived:   %s (2xx, by media type)\n", joinCounts(s.Archived))
	}
	if len(s.Refused) > 0 {
		fmt.Fprintf(w, "  refused:    %s (bodies not read, by the media policy)\n", joinCounts(s.Refused))
	}
	if len(s.Handled) > 0 {
		fmt.Fprintf(w, "  read:       %s (by content handler; the rest archived only)", joinCounts(s.Handled))
		if len(s.Unreadable) > 0 {
			fmt.Fprintf(w, "; malformed %s", joinCounts(s.Unreadable))
		}
		if len(s.Cut) > 0 {
			fmt.Fprintf(w, "; cut at a limit %s", joinCounts(s.Cut))
		}
		fmt.Fprintln(w)
	}
	if len(s.Extended) > 0 {
		fmt.Fprintf(w, "  extended:   %s (by extension)", joinCounts(s.Extended))
		if len(s.ExtensionFailed) > 0 {
			fmt.Fprintf(w, "; failed %s", joinCounts(s.ExtensionFailed))
		}
		fmt.Fprintln(w)
	}
	if s.LinksCut > 0 {
		fmt.Fprintf(w, "  links cut:  %d pages at the per-page link cap, their later links not read: %s\n", s.LinksCut, joinCounts(s.LinksCutHosts))
	}
	if s.OverDecodeCap > 0 || s.BadEncoding > 0 || s.Binary > 0 {
		fmt.Fprintf(w, "  bodies:     %d over the decompressed-size cap, %d with a bad Content-Encoding, %d binary labelled as text\n", s.OverDecodeCap, s.BadEncoding, s.Binary)
	}
	if len(s.Charsets) > 0 {
		fmt.Fprintf(w, "  charsets:   %s\n", joinCounts(s.Charsets))
	}
	if len(s.Errors) > 0 || s.Retried > 0 {
		fmt.Fprintf(w, "  errors:     %s", cmp.Or(joinCounts(s.Errors), "none"))
		if s.Retried > 0 {
			fmt.Fprintf(w, "; %d URLs queued once more after a timeout, a failed connection or a 500, 502 or 504", s.Retried)
		}
		fmt.Fprintln(w)
	}
	if s.Throttled > 0 || s.Unavailable > 0 || s.Strained > 0 || s.Parks > 0 || s.GaveUp > 0 {
		fmt.Fprintf(w, "  backoff:    %d answers 429, %d answers 503, %d requests cut (strain), %d hosts parked after failures in a row, %d given up%s\n",
			s.Throttled, s.Unavailable, s.Strained, s.Parks, s.GaveUp, named(s.GaveUp, s.GaveUpHosts))
	}
	fmt.Fprintf(w, "  robots.txt: %s (fetches); %d redirect hops; %d failures retried", joinCounts(s.Robots), s.RobotsHops, s.RobotsRetries)
	if s.RobotsCut > 0 {
		fmt.Fprintf(w, "; %d files over 500 KiB read in part", s.RobotsCut)
	}
	if s.RobotsLastGood > 0 {
		fmt.Fprintf(w, "; %d unreachable files replaced by the last good copy", s.RobotsLastGood)
	}
	fmt.Fprintln(w)
	if len(s.HostsDown) > 0 {
		var n int64
		for _, v := range s.HostsDown {
			n += v
		}
		fmt.Fprintf(w, "  not crawled: %d hosts for their robots.txt (failed, or a Crawl-delay over --max-crawl-delay): %s\n", n, joinCounts(s.HostsDown))
		for _, h := range s.HostsDownNamed {
			fmt.Fprintf(w, "    %-40s %s", h.Host, h.Cause)
			if h.Err != "" {
				fmt.Fprintf(w, ": %s", h.Err)
			}
			fmt.Fprintln(w)
		}
		if more := n - int64(len(s.HostsDownNamed)); more > 0 {
			fmt.Fprintf(w, "    ... and %d more (the fetch log has each one's robots.txt fetches)\n", more)
		}
	}
	if s.Policies > 0 {
		fmt.Fprintf(w, "  policies:   %d hosts with an operator policy; %d URLs refused by one\n", s.Policies, s.Rejected[judge.Policy])
	}
	fmt.Fprintf(w, "  rejected:   %s\n", joinCounts(s.Rejected))
	if u := s.WARCUploads; u != nil {
		fmt.Fprintf(w, "  objects:    %d WARC files uploaded (%s) and removed from disk", u.Files, byteSize(u.Bytes))
		if u.Failed > 0 {
			fmt.Fprintf(w, "; %d left on disk for the next start (%s)", u.Failed, u.LastError)
		}
		fmt.Fprintln(w)
	}
	if s.Requeued > 0 {
		fmt.Fprintf(w, "  requeued:   %d URLs, their importance risen while they waited\n", s.Requeued)
	}
	if s.RedirectSeen > 0 {
		fmt.Fprintf(w, "  redirects:  %d to a URL already seen (loops, or pages reached another way)\n", s.RedirectSeen)
	}
	if len(s.Held) > 0 || s.Released > 0 {
		var n int64
		for _, v := range s.Held {
			n += v
		}
		fmt.Fprintf(w, "  held:       %d URLs held by the trap budget (a family past its budget; a shape of copies, of closed or missing pages, or of searches that led nowhere; a barren parameter), queued at the lowest priority", n)
		if len(s.Held) > 0 {
			fmt.Fprintf(w, ": %s", joinCounts(s.Held))
		}
		if s.Released > 0 {
			fmt.Fprintf(w, "; %d held URLs queued as usual since, as their family's pages showed their worth", s.Released)
		}
		fmt.Fprintln(w)
	}
	if len(s.TrapCosts) > 0 {
		fmt.Fprintf(w, "  trap rules: %d hosts had URLs refused or held by a trap rule; the most:\n", s.TrapHostCount)
		for _, c := range s.TrapCosts {
			fmt.Fprintf(w, "    %-40s %6d requests", c.Host, c.Requests)
			if n := c.RefusedTotal(); n > 0 || c.Held == 0 {
				fmt.Fprintf(w, ", %d URLs refused: %s", n, joinCounts(c.Refused))
			}
			if c.Held > 0 {
				fmt.Fprintf(w, ", %d held past the trap budget", c.Held)
			}
			fmt.Fprintln(w)
		}
	}
	if s.NoIndex > 0 || s.NoFollow > 0 {
		fmt.Fprintf(w, "  directives: %d noindex, %d nofollow pages\n", s.NoIndex, s.NoFollow)
	}
	if s.Queued > 0 {
		fmt.Fprintf(w, "  left queued: %d\n", s.Queued)
	}
	if s.InertParamHosts > 0 {
		fmt.Fprintf(w, "  parameters: %d hosts with a query parameter learnt inert (their pages the same whatever its value), their links queued without it: %s\n",
			s.InertParamHosts, strings.Join(s.InertParams, ", "))
	}
	if s.OffsiteRedirectors > 0 {
		fmt.Fprintf(w, "  redirectors: %d URL shapes whose every URL asked for redirected out of the scope (click trackers): their other URLs not asked for (%d refused or dropped)\n",
			s.OffsiteRedirectors, s.Rejected[judge.OffsiteRedirect])
	}
	if s.SitemapsLater > 0 {
		fmt.Fprintf(w, "  sitemaps:   %d sitemap leases put off, the crawl having found as many pages as --max-pages left it to fetch; fetched once those ran out, or left queued for the next run\n", s.SitemapsLater)
	}
	if s.DeferredHostCount > 0 {
		fmt.Fprintf(w, "  deferred:   %d URLs of %d %s held back by failures, left queued for the next run on this data directory:\n",
			s.Deferred, s.DeferredHostCount, plural(s.DeferredHostCount, "host", "hosts"))
		for _, d := range s.DeferredHosts {
			reason := d.Why
			if d.Cause != "" {
				reason = d.Cause + ", " + d.Why
			}
			fmt.Fprintf(w, "    %-40s %6d URLs  %s until %s", d.Host, d.URLs, reason, d.Until.Format(time.DateTime))
			if len(d.Sample) > 0 {
				fmt.Fprintf(w, "  (%s%s)", strings.Join(d.Sample, " "), more(d.URLs, len(d.Sample)))
			}
			fmt.Fprintln(w)
		}
		if n := s.DeferredHostCount - len(s.DeferredHosts); n > 0 {
			fmt.Fprintf(w, "    ... and %d more %s (every URL is in the fetch log, outcome \"deferred\")\n", n, plural(n, "host", "hosts"))
		}
	}
	if s.SeenFalsePos > 0 {
		fmt.Fprintf(w, "  seen set:   %d Bloom false positives caught by the exact store\n", s.SeenFalsePos)
	}
	if s.NearDups > 0 {
		fmt.Fprintf(w, "  near-dups:  %d pages within the SimHash threshold of an earlier page\n", s.NearDups)
	}
	if s.Traps > 0 {
		fmt.Fprintf(w, "  traps:      %d hosts or directories cut off, most of their last pages near-duplicates: no new URLs in them admitted%s\n",
			s.Traps, named(s.Traps, s.TrapHosts))
	}
	if s.Recrawls > 0 || s.NotModified > 0 || s.ListedChanged > 0 {
		fmt.Fprintf(w, "  recrawl:    %d URLs queued again when due, %d early for a sitemap's <lastmod>; %d answered 304 Not Modified\n",
			s.Recrawls, s.ListedChanged, s.NotModified)
	}
	if s.ListedDropped > 0 {
		fmt.Fprintf(w, "  sitemaps:   %d hints about known URLs dropped: more waited for a recrawl scan than are kept\n", s.ListedDropped)
	}
	if s.Revisits > 0 {
		fmt.Fprintf(w, "  dedup:      %d responses already archived, written as revisits (%s not stored again)\n", s.Revisits, byteSize(s.RevisitBytes))
	}
	if s.DedupImported > 0 {
		fmt.Fprintf(w, "  earlier:    %d payloads known from earlier crawls; %d responses were revisits of them (%s not stored again)\n", s.DedupImported, s.EarlierRevisits, byteSize(s.EarlierBytes))
	}
	if s.Requisites > 0 {
		fmt.Fprintf(w, "  requisites: %d found on pages and style sheets, %d new and queued (the rest seen already or refused), %d fetched and archived\n", s.Requisites, s.RequisitesQueued, s.RequisitesArchived)
	}
	if line := s.Browser.Line(); line != "" {
		fmt.Fprintf(w, "  render:     %s\n", line)
	}
	if s.Rendered > 0 {
		fmt.Fprintf(w, "  archive:    %d exchanges archived as parsed, not as sent (header blocks a WARC reader would split early)\n", s.Rendered)
	}
	fmt.Fprintf(w, "  WARC:       %d files, %s\n", len(s.WARCFiles), byteSize(s.WARCBytes))
	for _, f := range s.WARCFiles {
		fmt.Fprintf(w, "              %s\n", f)
	}
}

// named is " (a, b, ...)" for the first names of n hosts, "" for none.
func named(n int64, names []string) string {
	if len(names) == 0 {
		return ""
	}
	more := ""
	if n > int64(len(names)) {
		more = ", ..."
	}
	return " (" + strings.Join(names, ", ") + more + ")"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// more is " ..." when n things were named as shown, fewer.
func more(n, shown int) string {
	if n > shown {
		return " ..."
	}
	return ""
}

func joinCounts(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// HostPages counts a host's pages that something happened to.
type HostPages = live.HostPages

// HostCause is a host and what failed on it.
type HostCause struct {
	Host  string `json:"host"`
	Cause string `json:"cause"` // the kind: "robots.txt 5xx", "tls", "timeout", ...
	Err   string `json:"error,omitempty"`
}

// DeferredHost is a host whose URLs a crawl left queued when it stopped
// waiting on hosts held back by failures (Config.FailureWait): the next
// run on the same data directory takes them up.
type DeferredHost struct {
	Host   string    `json:"host"`
	URLs   int       `json:"urls"`   // URLs left queued
	Until  time.Time `json:"until"`  // when its clock allows the next request
	Why    string    `json:"why"`    // what set that clock: Retry-After, backoff, parked, retry
	Cause  string    `json:"cause"`  // what the host last answered: "503", "robots.txt 503", "timeout"
	Sample []string  `json:"sample"` // its first URLs
}

// MaxSeedStatus is the most seeds Summary.SeedStatus lists: GET /v1/seeds
// pages through all of them.
const MaxSeedStatus = 1000

// maxSeedLines is the most seeds the printed summary names.
const maxSeedLines = 20

// SeedFailure is a seed of the command line that got no response, and
// why: the crawl says it, and what would let it be fetched.
type SeedFailure struct {
	URL    string `json:"url"`
	Reason string `json:"reason"` // a Reject* reason, "error:KIND", or "queued" (left for a later run)
	Detail string `json:"detail,omitempty"`
	Hint   string `json:"hint,omitempty"` // the flag that would let it be fetched, where one would
}

// RenderSummary is what rendering did in a crawl.
type RenderSummary struct {
	Mode         string `json:"mode"`          // the mode the crawl ran in ("never" when Chromium was missing)
	Off          string `json:"off"`           // why the crawl could not render, if it could not
	Pages        int64  `json:"pages"`         // pages rendered
	Fallbacks    int64  `json:"fallbacks"`     // pages whose render failed: they kept their static links
	Requests     int64  `json:"requests"`      // the browsers' requests (the pages' own documents included)
	Recalled     int64  `json:"recalled"`      // of which answered from the archive: what the crawl had fetched already
	Refused      int64  `json:"refused"`       // of which refused (robots.txt, the guard, a policy, a cap, not GET)
	Spared       int64  `json:"spared"`        // requisites' leases done without a request: a render had fetched them
	NewLinks     int64  `json:"new_links"`     // links found in rendered DOMs that the static parse had not
	HostsStopped int64  `json:"hosts_stopped"` // hosts auto mode stopped rendering (GiveUpAfter renders without a new link)
	Escapes      int64  `json:"escapes"`       // the pages' connections outside interception (a WebSocket), refused at the dead-end proxy
	// BrowserConns are the browsers' own background connections
	// (Chromium's calls home), refused at the dead-end proxy, and
	// BrowserTargets where they went, the most often first.
	BrowserConns   int64    `json:"browser_conns"`
	BrowserTargets []string `json:"browser_targets"`
	Restarts       int64    `json:"restarts"` // browsers killed and replaced
}

// Line is the summary's render line, "" when there is nothing to say: no
// page was rendered and no browser asked for anything.
func (b *RenderSummary) Line() string {
	if b == nil {
		return ""
	}
	if b.Off != "" {
		return fmt.Sprintf("off (%s): the crawl ran as --render never", b.Off)
	}
	if b.Pages == 0 && b.Fallbacks == 0 && b.Requests == 0 && b.Spared == 0 && b.HostsStopped == 0 && b.Escapes == 0 && b.BrowserConns == 0 && b.Restarts == 0 {
		return ""
	}
	var l strings.Builder
	fmt.Fprintf(&l, "%s: %d pages rendered", b.Mode, b.Pages)
	if b.Fallbacks > 0 {
		fmt.Fprintf(&l, ", %d fell back to their static links", b.Fallbacks)
	}
	fmt.Fprintf(&l, "; %d browser requests through weft's fetch path (%d answered from the archive, %d refused); %d new links", b.Requests, b.Recalled, b.Refused, b.NewLinks)
	if b.Spared > 0 {
		fmt.Fprintf(&l, "; %d requisites a render had fetched not fetched again", b.Spared)
	}
	if b.HostsStopped > 0 {
		fmt.Fprintf(&l, "; %d hosts no longer rendered", b.HostsStopped)
	}
	if b.Escapes > 0 {
		fmt.Fprintf(&l, "; %d page connections outside interception (WebSockets) refused", b.Escapes)
	}
	if b.BrowserConns > 0 {
		fmt.Fprintf(&l, "; %d of Chromium's own background connections (%s) refused, none of them left the machine", b.BrowserConns, strings.Join(b.BrowserTargets, ", "))
	}
	if b.Restarts > 0 {
		fmt.Fprintf(&l, "; %d browsers replaced", b.Restarts)
	}
	return l.String()
}

// MaxNamed is how many hosts a First names: the summary's lists of hosts
// that something happened to.
const MaxNamed = 20

// First counts things that happened, and keeps the first MaxNamed of them
// to name. It is safe for concurrent use.
type First[T any] struct {
	n     atomic.Int64
	mu    sync.Mutex
	first []T
}

// Add counts v, and keeps it if fewer than MaxNamed were kept.
func (l *First[T]) Add(v T) {
	l.n.Add(1)
	l.mu.Lock()
	if len(l.first) < MaxNamed {
		l.first = append(l.first, v)
	}
	l.mu.Unlock()
}

// Snapshot is how many were counted, and the first of them.
func (l *First[T]) Snapshot() (int64, []T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n.Load(), slices.Clone(l.first)
}
