package frontier

import (
	"cmp"
	"fmt"
	"math"
	"time"
)

// Signal is what a response said about its server's health.
type Signal uint8

const (
	// OK: an answer (2xx, 3xx, 4xx other than 429). Backoff shrinks and
	// the error streak ends.
	OK Signal = iota
	// Throttled: 429 Too Many Requests. The server asks for less: its
	// Retry-After is honoured, else the backoff doubles.
	Throttled
	// Unavailable: 503 Service Unavailable. Throttled and an error both.
	Unavailable
	// Failed: a 5xx other than 503, or a request that failed without
	// straining the server (a TLS or protocol error). It counts toward the
	// host's error streak.
	Failed
	// Strained: the request ended without a whole answer: a timeout, a
	// reset, a body cut off by the server or by the crawler's silence
	// timeout. The server may still be working on it, so it is a failure
	// and a wait both: the backoff becomes at least LatencyFactor times
	// the request's elapsed time (Result.Took), doubling with each strain
	// in a row, and the host's server group (Config.IPGap) waits as long
	// as the latency rule says (at least MinBackoff), doubled with each
	// strain in a row on the group, whichever host it was for (strainHold).
	Strained
	// Lost: the lease ended before its fetcher said what became of it
	// (an external fetcher's lease that expired). Whether a request went
	// out is not known: the host's clock is armed as after one (its wait
	// named as any gap's), and nothing else moves, neither its backoff nor
	// its failures nor the cause it is said to be failing for.
	Lost
)

func (s Signal) String() string {
	switch s {
	case OK:
		return "ok"
	case Throttled:
		return "throttled"
	case Unavailable:
		return "unavailable"
	case Failed:
		return "failed"
	case Strained:
		return "strained"
	case Lost:
		return "lost"
	}
	return fmt.Sprintf("signal(%d)", int(s))
}

// Worse returns the signal of s and o that moves a clock most: strain,
// then a 503, a 429, another failure, a request lost, an answer.
func (s Signal) Worse(o Signal) Signal {
	rank := func(s Signal) int {
		switch s {
		case Strained:
			return 5
		case Unavailable:
			return 4
		case Throttled:
			return 3
		case Failed:
			return 2
		case Lost:
			return 1
		}
		return 0
	}
	if rank(o) > rank(s) {
		return o
	}
	return s
}

// Clock is a host's politeness state: when it may be asked next, and what
// it has told the crawler so far. It is all a restart needs to go on being
// polite to the host.
type Clock struct {
	NextAt     time.Time     // earliest start of the next request
	CrawlDelay time.Duration // robots.txt Crawl-delay
	Backoff    time.Duration // grows on 429/503, shrinks on success
	Streak     int           // failures in a row
	Errors     int           // failures in all, less one for each answer
	Parks      int           // times the host was parked for its streak
	GaveUp     bool          // too many failures: its URLs are dropped, not fetched
	// Throttles counts 429s in a row, the first at ThrottledSince.
	// GiveUpAfter of them, over at least MaxBackoff, give the host up
	// too: a server that answers nothing else would keep its URLs queued
	// for ever, while one that rate-limits a burst answers again within
	// that time. They are kept with the clock, so a restart does not
	// grant a throttling host another run.
	Throttles      int
	ThrottledSince time.Time
	// Why says what set NextAt, and Cause what the host last answered
	// when that was a failure ("503", "robots.txt 503", "timeout"; "" after
	// an answer): together, what the host waits for.
	Why   Why
	Cause string
}

// Why is what set a host's clock: why the host is not asked sooner.
type Why uint8

// The reasons of a host's wait. WhyBackoff, WhyRetryAfter, WhyPark and
// WhyRetry are set because requests failed, the others between answers.
const (
	WhyNone       Why = iota // not known (a clock stored by an older weft), or no wait
	WhyGap                   // the delay, or the host's Crawl-delay
	WhyLatency               // the latency factor times the last answer's time
	WhyBackoff               // the backoff after 429s, 503s and requests cut by strain
	WhyRetryAfter            // the Retry-After of a 429 or 503
	WhyPark                  // parked after failures in a row
	WhyRetry                 // the crawler retries what failed then (Result.Hold with HoldRetry)
	WhyHold                  // the crawler's own wait, not a failure's (Result.Hold)
	numWhy
)

func (w Why) String() string {
	switch w {
	case WhyNone:
		return "none"
	case WhyGap:
		return "delay"
	case WhyLatency:
		return "latency"
	case WhyBackoff:
		return "backoff"
	case WhyRetryAfter:
		return "Retry-After"
	case WhyPark:
		return "parked"
	case WhyRetry:
		return "retry"
	case WhyHold:
		return "hold"
	}
	return fmt.Sprintf("why(%d)", int(w))
}

// Reason says what the clock waits for, in words: its Cause and its Why
// ("robots.txt 503, Retry-After"), or its Why alone ("delay").
func (c Clock) Reason() string {
	if c.Cause == "" {
		return c.Why.String()
	}
	return c.Cause + ", " + c.Why.String()
}

// until returns c held until at at least, for why if that moves it.
func (c Clock) until(at time.Time, why Why) Clock {
	if at.After(c.NextAt) {
		c.NextAt, c.Why = at, why
	}
	return c
}

// Failing reports whether the host's last request failed (Cause says how)
// and no answer has come since: whatever term of its gap is the longest
// (a Retry-After shorter than the delay), it waits to be asked again
// after a failure.
func (c Clock) Failing() bool { return c.Cause != "" }

// DefaultLatencyFactor is Politeness.LatencyFactor's default, Heritrix's
// delay factor: after a response that took t, the host waits at least 5t,
// so the crawler keeps one of the server's workers busy at most a sixth of
// the time. A host that answers within Delay/5 (200 ms at the usual 1 s) is
// not slowed at all; a request cut by the 15 s silence timeout holds its
// host for 75 s, long enough for a server still working on it to finish.
const DefaultLatencyFactor = 5

// Politeness says how a host's clock moves after each request, beyond
// Config.Delay. It is part of Config; New fills in the defaults of the
// fields left zero.
type Politeness struct {
	// LatencyFactor makes the gap at least this multiple of the last
	// response's download time (Najork's rule: a slow server is asked
	// less often), and a strained request's backoff at least this multiple
	// of its elapsed time. Zero means DefaultLatencyFactor; negative turns
	// the rule off (a strain then backs off from MinBackoff).
	LatencyFactor float64
	// MinBackoff is the backoff after a first 429 or 503 without
	// Retry-After; it doubles with each one after, up to MaxBackoff, and
	// halves with each success. Zero means max(Delay, 1s).
	MinBackoff time.Duration
	// MaxBackoff caps the backoff. Zero means 10 minutes.
	MaxBackoff time.Duration
	// MaxRetryAfter caps the wait a Retry-After may ask for. Zero means 1 hour.
	MaxRetryAfter time.Duration
	// ParkAfter failures in a row park the host for ParkFor, doubled at
	// each park after the first. Zero means 5 and 1 minute; a negative
	// ParkAfter never parks.
	ParkAfter int
	ParkFor   time.Duration
	// GiveUpAfter failures more than its answers give the host up: its
	// queued URLs are dropped (an answer takes a failure back). So do
	// GiveUpAfter 429s in a row over at least MaxBackoff. Zero means 20;
	// negative never gives up.
	GiveUpAfter int
}

// DefaultPoliteness is what the fields of a Politeness left zero mean,
// but MinBackoff, which follows the delay.
func DefaultPoliteness() Politeness {
	return Politeness{LatencyFactor: DefaultLatencyFactor, MaxBackoff: 10 * time.Minute, MaxRetryAfter: time.Hour,
		ParkAfter: 5, ParkFor: time.Minute, GiveUpAfter: 20}
}

func (p *Politeness) setDefaults(delay time.Duration) {
	switch {
	case p.LatencyFactor == 0:
		p.LatencyFactor = DefaultLatencyFactor
	case p.LatencyFactor < 0:
		p.LatencyFactor = 0
	}
	if p.MinBackoff == 0 {
		p.MinBackoff = max(delay, time.Second)
	}
	d := DefaultPoliteness()
	if p.MaxBackoff == 0 {
		p.MaxBackoff = d.MaxBackoff
	}
	if p.MaxRetryAfter == 0 {
		p.MaxRetryAfter = d.MaxRetryAfter
	}
	if p.ParkAfter == 0 {
		p.ParkAfter = d.ParkAfter
	}
	if p.ParkFor == 0 {
		p.ParkFor = d.ParkFor
	}
	if p.GiveUpAfter == 0 {
		p.GiveUpAfter = d.GiveUpAfter
	}
}

// Validate reports the first invalid field.
func (p Politeness) Validate() error {
	switch {
	case math.IsNaN(p.LatencyFactor) || math.IsInf(p.LatencyFactor, 0):
		return fmt.Errorf("frontier: latency factor %v is not a number", p.LatencyFactor)
	case p.MinBackoff < 0 || p.MaxBackoff < 0 || p.MaxRetryAfter < 0 || p.ParkFor < 0:
		return fmt.Errorf("frontier: backoff, Retry-After cap and park time must not be negative")
	case p.MinBackoff > 0 && p.MaxBackoff > 0 && p.MinBackoff > p.MaxBackoff:
		return fmt.Errorf("frontier: least backoff %v is above the most %v", p.MinBackoff, p.MaxBackoff)
	}
	return nil
}

// gap is the least time between two requests to a host with this clock,
// before anything the last response adds.
func (cfg *Config) gap(c Clock) time.Duration {
	return max(cfg.Delay, c.CrawlDelay, c.Backoff)
}

// Advance returns c after a request that ended at now with result r; it is
// what Complete does to the host's clock. It is safe for concurrent use:
// a caller that makes several requests under one lease (a render) moves
// the clock with each. A result with no request (Fetched false) changes
// only the Crawl-delay it may carry and the Hold it may ask for.
func (f *Frontier) Advance(c Clock, r Result, now time.Time) Clock {
	return f.cfg.advance(c, r, now)
}

// ClockWriter stages a host's clock where the rest of a lease's end is
// recorded, so that both reach the disk together.
type ClockWriter interface {
	PutClock(host string, c Clock)
}

// Settle moves the host's clock at the end of lease l: it advances the
// lease's clock by r at now, or takes r.Clock when the caller moved it
// with more requests than the lease's own, and stages it with w when a
// restart would not assume as much (durable; see Durable). The result it
// returns carries the clock, for Complete once w's batch is on disk, so
// that the clock the frontier installs is the one written. It is safe for
// concurrent use.
func (f *Frontier) Settle(l Lease, r Result, now time.Time, w ClockWriter) (_ Result, durable bool) {
	clock := f.cfg.advance(l.Clock, r, now)
	if r.Clock != nil {
		clock = *r.Clock
	}
	r.Clock = &clock
	if f.Durable(l.Clock, clock, now) {
		w.PutClock(l.Host, clock)
		return r, true
	}
	return r, false
}

// Durable reports whether after, the clock Advance returned at now from
// before, says more than a restart assumes anyway, so that it must be
// written to disk. A restart (Config.Resumed) holds every host for one gap
// computed from its stored clock; so a clock whose only news is a NextAt
// within the usual gap need not be written, and one that changed anything
// else (Crawl-delay, backoff, failures) or holds the host longer
// (Retry-After, a park, the latency rule) must be.
func (f *Frontier) Durable(before, after Clock, now time.Time) bool {
	b, a := before, after
	b.NextAt, a.NextAt = time.Time{}, time.Time{}
	// Why and Cause explain NextAt: a clock held beyond its gap is written
	// with them, and one that is not holds nothing a restart must know.
	b.Why, a.Why, b.Cause, a.Cause = 0, 0, "", ""
	return a != b || after.NextAt.After(now.Add(f.cfg.gap(after)))
}

func (cfg *Config) advance(c Clock, r Result, now time.Time) Clock {
	p := &cfg.Politeness
	if r.SetCrawlDelay {
		c.CrawlDelay = r.CrawlDelay
	}
	holdWhy := WhyHold
	if r.HoldRetry {
		holdWhy = WhyRetry
	}
	if !r.Fetched {
		if r.Hold > 0 && now.Add(r.Hold).After(c.NextAt) {
			c.NextAt = now.Add(r.Hold)
			c.Why = holdWhy
			if r.Cause != "" {
				c.Cause = r.Cause
			}
		}
		return c
	}
	hold := r.Hold // a wait for this once, beyond the gap
	raise := func(d time.Duration, why Why) {
		if d > hold {
			hold, holdWhy = d, why
		}
	}
	switch r.Signal {
	case OK:
		c.Streak = 0
		// An answer takes one failure back: a site whose broken pages
		// are a few of many is not given up for them.
		c.Errors = max(c.Errors-1, 0)
		c.Throttles, c.ThrottledSince = 0, time.Time{}
		c.Backoff /= 2
		if c.Backoff < p.MinBackoff/2 {
			c.Backoff = 0
		}
	case Throttled, Unavailable:
		if r.RetryAfter > 0 {
			raise(min(r.RetryAfter, p.MaxRetryAfter), WhyRetryAfter)
		} else {
			c.Backoff = min(max(2*c.Backoff, p.MinBackoff), p.MaxBackoff)
		}
		if r.Signal == Throttled {
			c.Streak = 0 // an answer: the server is up and asks for less
			if c.Throttles++; c.Throttles == 1 {
				c.ThrottledSince = now
			}
			if p.GiveUpAfter > 0 && c.Throttles >= p.GiveUpAfter && now.Sub(c.ThrottledSince) >= p.MaxBackoff {
				c.GaveUp = true
			}
		}
	}
	if r.Signal == Strained {
		// MaxBackoff caps the doubling, never the latency rule: the server
		// may be working on the request for as long as that says.
		c.Backoff = max(min(max(2*c.Backoff, p.MinBackoff), p.MaxBackoff), p.latencyWait(r.Took))
	}
	if r.Signal == Unavailable || r.Signal == Failed || r.Signal == Strained {
		c.Streak++
		c.Errors++
		if p.ParkAfter > 0 && c.Streak >= p.ParkAfter {
			raise(p.ParkFor<<min(c.Parks, 20), WhyPark)
			c.Parks++
			c.Streak = 0
		}
		if p.GiveUpAfter > 0 && c.Errors >= p.GiveUpAfter {
			c.GaveUp = true
		}
	}
	gap, why := max(cfg.Delay, c.CrawlDelay), WhyGap
	if c.Backoff > 0 && c.Backoff >= gap {
		gap, why = c.Backoff, WhyBackoff
	}
	if l := p.latencyWait(r.Took); l > gap {
		gap, why = l, WhyLatency
	}
	if hold > gap {
		gap, why = hold, holdWhy
	}
	c.NextAt = now.Add(gap)
	c.Why = why
	if r.Signal == Lost {
		return c // neither an answer nor a failure: its Cause stands
	}
	c.Cause = "" // an answer: the host is not failing
	if r.Signal != OK {
		c.Cause = cmp.Or(r.Cause, r.Signal.String())
	}
	return c
}

// latencyWait is the wait the latency rule asks for after a request that
// took took.
func (p *Politeness) latencyWait(took time.Duration) time.Duration {
	if p.LatencyFactor <= 0 || took <= 0 {
		return 0
	}
	return time.Duration(min(p.LatencyFactor*float64(took), math.MaxInt64/2))
}
