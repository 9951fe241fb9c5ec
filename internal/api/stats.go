package api

import (
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Stats is the body of GET /v1/stats: the crawl's counters since it
// started, and its frontier now.
type Stats struct {
	ElapsedSeconds float64          `json:"elapsed_seconds"`
	Paused         bool             `json:"paused"`
	Pages          int64            `json:"pages"`
	RobotsFetches  int64            `json:"robots_fetches"`
	Bytes          int64            `json:"bytes"`
	ByStatus       map[string]int64 `json:"by_status"`
	ByOutcome      map[string]int64 `json:"by_outcome"`
	Errors         map[string]int64 `json:"errors"`
	Rejected       map[string]int64 `json:"rejected"`
	Robots         map[string]int64 `json:"robots"`
	Handled        map[string]int64 `json:"handled"`
	Revisits       int64            `json:"revisits"`
	RevisitBytes   int64            `json:"revisit_bytes"` // their payload bytes, not stored again
	// EarlierRevisits and EarlierBytes are the revisits of captures of
	// earlier crawls (--dedup-from), and their payload bytes.
	EarlierRevisits int64         `json:"earlier_revisits"`
	EarlierBytes    int64         `json:"earlier_revisit_bytes"`
	NearDups        int64         `json:"near_dups"`
	NotModified     int64         `json:"not_modified"`
	Recrawls        int64         `json:"recrawls"`
	Throttled       int64         `json:"throttled"`
	Unavailable     int64         `json:"unavailable"`
	Strained        int64         `json:"strained"`
	GaveUp          int64         `json:"gave_up"`
	Traps           int64         `json:"traps"`
	SeenFalsePos    int64         `json:"seen_false_positives"`
	WARCFiles       []string      `json:"warc_files"`
	WARCBytes       int64         `json:"warc_bytes"`
	Uploads         *UploadStats  `json:"uploads,omitempty"` // with an object store only
	Cluster         *ClusterStats `json:"cluster,omitempty"` // on a node of a cluster only
	Frontier        FrontierStats `json:"frontier"`
}

// ClusterStats is a node's share of a cluster's partitions.
type ClusterStats struct {
	Node       string `json:"node"`
	Partitions []int  `json:"partitions"` // held now, in order
	Handoffs   int    `json:"handoffs"`   // partitions taken or given up since the node started
	Snapshots  int64  `json:"snapshots"`  // snapshots of its partitions' logs made since the node started
}

func clusterStatsOf(n ClusterNode) *ClusterStats {
	if n == nil {
		return nil
	}
	owned := n.Owned()
	parts := make([]int, 0, len(owned))
	for p := range owned {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	return &ClusterStats{Node: n.Name(), Partitions: parts, Handoffs: n.Handoffs(), Snapshots: n.Snapshots()}
}

// UploadStats is what the crawl moved to the object store (--s3-*).
type UploadStats struct {
	Files    int64 `json:"files"`    // WARC files uploaded and removed from disk
	Bytes    int64 `json:"bytes"`    // their size
	Failures int64 `json:"failures"` // runs of attempts that failed; the file stayed on disk, to be tried again
}

// FrontierStats is the frontier part of Stats.
type FrontierStats struct {
	Queued       int `json:"queued"`
	InFlight     int `json:"in_flight"`
	ActiveHosts  int `json:"active_hosts"`
	ReadyHosts   int `json:"ready_hosts"`
	WaitingHosts int `json:"waiting_hosts"`
	ParkedHosts  int `json:"parked_hosts"`
	HeldHosts    int `json:"held_hosts"`
	// Stored is the URLs in the durable queues, the leases out included:
	// the store's count, exact across restarts and crashes (Queued counts
	// an earlier run's URLs only as they are read back); null while the
	// state of an older weft is being counted.
	Stored *int64 `json:"stored"`
	// Wait is what the frontier waits for while no host is ready, or in
	// a continuous crawl with nothing queued the next recrawl; null when a
	// host is ready, or nothing is queued and no recrawl is known.
	Wait *WaitStats `json:"wait" sum:"-"`
}

// WaitStats is what the frontier waits for while no host is ready: the
// host whose clock comes first, when and why, and the hosts an operator
// holds.
type WaitStats struct {
	Host      string     `json:"host,omitempty"`
	Until     *time.Time `json:"until,omitempty"`
	InSeconds float64    `json:"in_seconds"`
	Why       string     `json:"why,omitempty"`   // delay, latency, backoff, Retry-After, parked, retry, hold; recrawl (nothing queued: Until is when the next URL comes due again)
	Cause     string     `json:"cause,omitempty"` // what the host last answered: "503", "robots.txt 503", "timeout"
	// FailuresOnly says that nothing is in flight and every host with URLs
	// waits on a clock set by failures; a crawl that ends stops waiting
	// for them at GiveUpAt, leaving their URLs queued for its next run.
	FailuresOnly bool       `json:"failures_only"`
	GiveUpAt     *time.Time `json:"give_up_at,omitempty"`
	HeldHosts    int        `json:"held_hosts"`
	ParkedHosts  int        `json:"parked_hosts"`
	Text         string     `json:"text"` // all of it in words, as the progress line says it
}

// statsOf is c's Stats as the API shows them: every count map and list
// present, empty or not, and the node's share of a cluster, if it is one.
func statsOf(c Crawl, n ClusterNode) Stats {
	st := c.Stats()
	for _, m := range []*map[string]int64{&st.ByStatus, &st.ByOutcome, &st.Errors, &st.Rejected, &st.Robots, &st.Handled} {
		if *m == nil {
			*m = map[string]int64{}
		}
	}
	if st.WARCFiles == nil {
		st.WARCFiles = []string{}
	}
	st.Cluster = clusterStatsOf(n)
	return st
}

func (s *Server) stats(w http.ResponseWriter, _ *http.Request) error {
	return writeJSON(w, http.StatusOK, statsOf(s.res.Crawl, s.cfg.Cluster))
}

// collector turns a snapshot of the crawl into metrics at each scrape, so
// that /metrics and /v1/stats count the same things the same way, and the
// crawl's hot path pays nothing for them.
type collector struct {
	c       Crawl
	cluster ClusterNode
}

var (
	descPages      = prometheus.NewDesc("weft_pages_total", "Page requests that got a response.", nil, nil)
	descFetches    = prometheus.NewDesc("weft_fetches_total", "Page responses by status class.", []string{"class"}, nil)
	descOutcomes   = prometheus.NewDesc("weft_fetch_outcomes_total", "Fetches by outcome (ok, redirect, revisit, not-modified, external, robots for an answered robots.txt, deferred, error:KIND, ...).", []string{"outcome"}, nil)
	descErrors     = prometheus.NewDesc("weft_fetch_errors_total", "Page requests without a response, by kind.", []string{"kind"}, nil)
	descBytes      = prometheus.NewDesc("weft_received_bytes_total", "Body bytes received, as sent (still encoded).", nil, nil)
	descRobots     = prometheus.NewDesc("weft_robots_fetches_total", "robots.txt fetch outcomes.", []string{"outcome"}, nil)
	descRejected   = prometheus.NewDesc("weft_rejected_urls_total", "Discovered URLs not queued, by reason.", []string{"reason"}, nil)
	descRevisits   = prometheus.NewDesc("weft_revisits_total", "Responses archived as revisits of a payload already stored.", nil, nil)
	descRevBytes   = prometheus.NewDesc("weft_revisit_bytes_total", "Payload bytes of the responses archived as revisits: not stored again.", nil, nil)
	descEarlierRev = prometheus.NewDesc("weft_earlier_revisits_total", "Responses archived as revisits of a capture of an earlier crawl (--dedup-from).", nil, nil)
	descEarlierB   = prometheus.NewDesc("weft_earlier_revisit_bytes_total", "Payload bytes of the revisits of earlier crawls' captures: not stored again.", nil, nil)
	descNearDups   = prometheus.NewDesc("weft_near_duplicates_total", "Pages within the SimHash threshold of an earlier page.", nil, nil)
	descNotMod     = prometheus.NewDesc("weft_not_modified_total", "304 answers to conditional recrawls.", nil, nil)
	descRecrawls   = prometheus.NewDesc("weft_recrawls_total", "URLs queued again when due.", nil, nil)
	descThrottled  = prometheus.NewDesc("weft_throttled_total", "429 answers.", nil, nil)
	descUnavail    = prometheus.NewDesc("weft_unavailable_total", "503 answers.", nil, nil)
	descStrained   = prometheus.NewDesc("weft_strained_total", "Requests cut by a timeout, a reset or a silence: strain, waited out for the latency factor times their time.", nil, nil)
	descFalsePos   = prometheus.NewDesc("weft_seen_false_positives_total", "Bloom filter false positives caught by the exact store.", nil, nil)
	descWARCBytes  = prometheus.NewDesc("weft_warc_bytes", "Bytes in the WARC files written.", nil, nil)
	descQueued     = prometheus.NewDesc("weft_frontier_queued", "URLs queued, in memory or on disk.", nil, nil)
	descStored     = prometheus.NewDesc("weft_queue_stored", "URLs in the durable queues, the leases out included: the store's count, exact across restarts; absent while an older state is being counted.", nil, nil)
	descInFlight   = prometheus.NewDesc("weft_frontier_in_flight", "Leases out.", nil, nil)
	descActive     = prometheus.NewDesc("weft_frontier_active_hosts", "Hosts with a back queue.", nil, nil)
	descReady      = prometheus.NewDesc("weft_frontier_ready_hosts", "Hosts that may be leased now.", nil, nil)
	descWaiting    = prometheus.NewDesc("weft_frontier_waiting_hosts", "Hosts waiting for their delay.", nil, nil)
	descParked     = prometheus.NewDesc("weft_frontier_parked_hosts", "Hosts parked after failures or waiting for another host's robots.txt.", nil, nil)
	descHeld       = prometheus.NewDesc("weft_frontier_held_hosts", "Hosts an operator has paused.", nil, nil)
	descPaused     = prometheus.NewDesc("weft_paused", "1 while an operator has paused the crawl.", nil, nil)
	descFetchTime  = prometheus.NewDesc("weft_fetch_duration_seconds", "Page fetches, from request to the end of the body.", nil, nil)
	descQueueDelay = prometheus.NewDesc("weft_queue_delay_seconds", "From a URL's queueing to its fetch.", nil, nil)
	descHost429    = prometheus.NewDesc("weft_host_throttled_total", "429 answers of the hosts with the most 429 and 5xx answers (at most 20 hosts); until one has any, one series at 0 without a host.", []string{"host"}, nil)
	descHost5xx    = prometheus.NewDesc("weft_host_server_errors_total", "5xx answers of the hosts with the most 429 and 5xx answers (at most 20 hosts); until one has any, one series at 0 without a host.", []string{"host"}, nil)
	descLinksCut   = prometheus.NewDesc("weft_pages_links_cut_total", "HTML pages cut at the per-page link cap: their later links not read.", nil, nil)
	descHostCut    = prometheus.NewDesc("weft_host_pages_links_cut_total", "Pages cut at the per-page link cap, of the hosts with the most of them (at most 20 hosts).", []string{"host"}, nil)
	descDNSHits    = prometheus.NewDesc("weft_dns_cache_hits_total", "Host lookups the DNS cache answered.", nil, nil)
	descDNSMisses  = prometheus.NewDesc("weft_dns_cache_misses_total", "Host lookups sent to the resolver.", nil, nil)
	descSeenCache  = prometheus.NewDesc("weft_seen_cache_hits_total", "Links to URLs already seen answered by the seen set's cache of confirmed keys, without a store lookup.", nil, nil)
	descBloomFill  = prometheus.NewDesc("weft_seen_bloom_fill_ratio", "Fraction of the seen set's Bloom filter bits set.", nil, nil)
	descOwned      = prometheus.NewDesc("weft_cluster_partitions", "Partitions this node of a cluster holds now.", nil, nil)
	descHandoffs   = prometheus.NewDesc("weft_cluster_handoffs_total", "Partitions this node has taken or given up.", nil, nil)
	descSnapshots  = prometheus.NewDesc("weft_cluster_snapshots_total", "Snapshots of its partitions' logs this node has made.", nil, nil)
	descUpFiles    = prometheus.NewDesc("weft_warc_uploaded_files_total", "WARC files uploaded to the object store and removed from disk.", nil, nil)
	descUpBytes    = prometheus.NewDesc("weft_warc_uploaded_bytes_total", "Bytes of the WARC files uploaded.", nil, nil)
	descUpFailures = prometheus.NewDesc("weft_warc_upload_failures_total", "Runs of upload attempts that failed; the file stays on disk, to be tried again.", nil, nil)
	descHighAge    = prometheus.NewDesc("weft_seconds_since_high_priority_fetch", "Time since the last fetch of a high-priority URL (a seed, a page a sitemap says changed); absent before the first.", nil, nil)
	allDescs       = []*prometheus.Desc{descPages, descFetches, descOutcomes, descErrors, descBytes, descRobots, descRejected, descRevisits, descRevBytes, descEarlierRev, descEarlierB, descNearDups, descNotMod, descRecrawls, descThrottled, descUnavail, descStrained, descFalsePos, descWARCBytes, descQueued, descStored, descInFlight, descActive, descReady, descWaiting, descParked, descHeld, descPaused, descFetchTime, descQueueDelay, descHost429, descHost5xx, descLinksCut, descHostCut, descDNSHits, descDNSMisses, descSeenCache, descBloomFill, descHighAge, descUpFiles, descUpBytes, descUpFailures, descOwned, descHandoffs, descSnapshots}
)

// withKnown is counts with each of the label values known in advance that
// it lacks at 0: a series that first appears at 1 is "no data" before, to
// an alert and to rate().
func withKnown(counts map[string]int64, known []string) map[string]int64 {
	out := maps.Clone(counts)
	if out == nil {
		out = map[string]int64{}
	}
	for _, k := range known {
		if _, ok := out[k]; !ok {
			out[k] = 0
		}
	}
	return out
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	st := statsOf(c.c, c.cluster)
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	counter(descPages, st.Pages)
	m := c.c.Metrics()
	for k, v := range withKnown(st.ByStatus, m.StatusClasses) {
		counter(descFetches, v, k)
	}
	for k, v := range withKnown(st.Errors, m.ErrorKinds) {
		counter(descErrors, v, k)
	}
	for k, v := range st.ByOutcome {
		counter(descOutcomes, v, k)
	}
	counter(descBytes, st.Bytes)
	for k, v := range st.Robots {
		counter(descRobots, v, k)
	}
	for k, v := range st.Rejected {
		counter(descRejected, v, k)
	}
	counter(descRevisits, st.Revisits)
	counter(descRevBytes, st.RevisitBytes)
	counter(descEarlierRev, st.EarlierRevisits)
	counter(descEarlierB, st.EarlierBytes)
	counter(descNearDups, st.NearDups)
	counter(descNotMod, st.NotModified)
	counter(descRecrawls, st.Recrawls)
	counter(descThrottled, st.Throttled)
	counter(descUnavail, st.Unavailable)
	counter(descStrained, st.Strained)
	counter(descFalsePos, st.SeenFalsePos)
	gauge(descWARCBytes, st.WARCBytes)
	if cs := st.Cluster; cs != nil {
		gauge(descOwned, int64(len(cs.Partitions)))
		counter(descHandoffs, int64(cs.Handoffs))
		counter(descSnapshots, cs.Snapshots)
	}
	if u := st.Uploads; u != nil {
		counter(descUpFiles, u.Files)
		counter(descUpBytes, u.Bytes)
		counter(descUpFailures, u.Failures)
	}
	f := st.Frontier
	for d, v := range map[*prometheus.Desc]int{descQueued: f.Queued, descInFlight: f.InFlight, descActive: f.ActiveHosts, descReady: f.ReadyHosts, descWaiting: f.WaitingHosts, descParked: f.ParkedHosts, descHeld: f.HeldHosts} {
		gauge(d, int64(v))
	}
	if f.Stored != nil {
		gauge(descStored, *f.Stored)
	}
	paused := int64(0)
	if st.Paused {
		paused = 1
	}
	gauge(descPaused, paused)

	for d, h := range map[*prometheus.Desc]Histogram{descFetchTime: m.FetchDuration, descQueueDelay: m.QueueDelay} {
		buckets := make(map[float64]uint64, len(h.Bounds))
		for i, b := range h.Bounds {
			buckets[b] = h.Counts[i]
		}
		ch <- prometheus.MustNewConstHistogram(d, h.Count, h.Sum, buckets)
	}
	for _, he := range m.HostErrors {
		counter(descHost429, he.Throttled, he.Host)
		counter(descHost5xx, he.ServerErrors, he.Host)
	}
	if len(m.HostErrors) == 0 {
		// No host is known in advance: until one has an answer to count,
		// one series without a host (Prometheus reads an empty label as
		// none) stands at 0, so that expressions over them have data.
		counter(descHost429, 0, "")
		counter(descHost5xx, 0, "")
	}
	counter(descLinksCut, m.LinksCut)
	for _, h := range m.LinksCutHosts {
		counter(descHostCut, h.Pages, h.Host)
	}
	counter(descDNSHits, m.DNSHits)
	counter(descDNSMisses, m.DNSMisses)
	counter(descSeenCache, m.SeenCacheHits)
	ch <- prometheus.MustNewConstMetric(descBloomFill, prometheus.GaugeValue, m.BloomFill)
	if !m.LastHighPriority.IsZero() {
		ch <- prometheus.MustNewConstMetric(descHighAge, prometheus.GaugeValue, time.Since(m.LastHighPriority).Seconds())
	}
}
