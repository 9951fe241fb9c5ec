package recrawl

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// logUniformWeb builds n pages whose mean change intervals are
// log-uniform between lo and hi seconds, as issue 19's web.
func logUniformWeb(n int, lo, hi, end float64, seed uint64) []simPage {
	r := rand.New(rand.NewPCG(seed, 7))
	pages := make([]simPage, n)
	for i := range pages {
		p := &pages[i]
		p.url = "http://sim.test/" + time.Duration(i).String()
		p.rate = 1 / math.Exp(math.Log(lo)+r.Float64()*(math.Log(hi)-math.Log(lo)))
		p.importance = 1
		for t := 0.0; ; {
			t += r.ExpFloat64() / p.rate
			if t >= end {
				break
			}
			p.changes = append(p.changes, t)
		}
	}
	return pages
}

// pooled is the host prior of a web that is one host: its pages'
// histories pooled.
func pooled(hist []History) HostPrior {
	var hp HostPrior
	for _, h := range hist {
		hp.Visits += h.Visits
		hp.Changes += h.Changes
		hp.Span += h.Span
	}
	return hp
}

// learntHost is learnt with the host's pooled prior in place of p.Prior.
func learntHost(pages []simPage, p Policy) func(float64, []float64, []History) int {
	return func(now float64, last []float64, hist []History) int {
		q := p
		q.Prior = pooled(hist).Rate(p.WithDefaults().Prior)
		return bestDue(pages, q.WithDefaults(), now, last, hist)
	}
}

// counted counts the fetches pick makes.
func counted(pick func(float64, []float64, []History) int, n *int) func(float64, []float64, []History) int {
	return func(now float64, last []float64, hist []History) int {
		i := pick(now, last, hist)
		if i >= 0 {
			*n++
		}
		return i
	}
}

// simulateFrom is simulate with staleness counted from warm seconds on
// (unweighted: every page of these webs has importance 1).
func simulateFrom(pages []simPage, dur, slot, warm float64, pick func(now float64, last []float64, hist []History) int) float64 {
	start := time.Unix(0, 0)
	last := make([]float64, len(pages))
	hist := make([]History, len(pages))
	stale := make([]float64, len(pages))
	for i := range hist {
		hist[i].Observe(start, false)
	}
	// staleIn adds the stale time of page i in [max(from, warm), to].
	staleIn := func(i int, from, to float64) {
		if first, changed := pages[i].changedIn(from, to); changed {
			stale[i] += max(to-max(first, warm), 0)
		}
	}
	for now := slot; now < dur; now += slot {
		if i := pick(now, last, hist); i >= 0 {
			_, changed := pages[i].changedIn(last[i], now)
			staleIn(i, last[i], now)
			hist[i].Observe(start.Add(time.Duration(now*float64(time.Second))), changed)
			last[i] = now
		}
	}
	var sum float64
	for i := range pages {
		staleIn(i, last[i], dur)
		sum += stale[i] / (dur - warm)
	}
	return sum / float64(len(pages))
}

// TestHostPriorLogUniform is issue 19's web in simulation: 200 pages of
// one host whose change intervals are log-uniform from 2 s to 10 days, a
// fetch every 12.5 ms (a visit per page every 2.5 s), Min 20 ms, the
// default prior of a day, over 200 s, staleness counted from 50 s on. At
// an equal fetch count uniform visits the pages in turn. With the pages'
// own histories alone, the day-long prior starves the pages that did not
// change between their first visits, and the schedule is worse than
// uniform (0.58x and 0.84x on the two webs); with the host's pooled prior
// it is 2.66x and 2.36x better. The test asserts 2x.
func TestHostPriorLogUniform(t *testing.T) {
	const n, dur, warm = 200, 200.0, 50.0
	slot := 1.0 / 80
	p := Policy{Min: 20 * time.Millisecond}
	for seed := range uint64(2) {
		pages := logUniformWeb(n, 2, 10*86400, dur, seed)
		run := func(pick func(float64, []float64, []History) int) (float64, float64, int) {
			c := 0
			s := simulateFrom(pages, dur, slot, warm, counted(pick, &c))
			return s, simulateFrom(pages, dur, dur/float64(c+1), warm, uniform(len(pages))), c
		}
		ls, lu, lc := run(learnt(pages, p))
		hs, hu, hc := run(learntHost(pages, p))
		t.Logf("web %d: own history only: %d fetches, staleness %.4f, uniform %.4f (%.2fx); host prior: %d fetches, %.4f, uniform %.4f (%.2fx)",
			seed, lc, ls, lu, lu/ls, hc, hs, hu, hu/hs)
		if hu < 2*hs {
			t.Errorf("web %d: with the host prior, staleness %.4f against uniform's %.4f: not 2x less", seed, hs, hu)
		}
	}
}

// TestIndexAtLiveBudget is TestHostPriorLogUniform at the budget and
// length of the crawl package's live measure (TestServeStalenessDefaults:
// 200 pages, 40 s, about 26 fetches a second, staleness counted from 10 s),
// which weft's schedule does not get to 2x uniform: it shows why. The
// refresh index given the true rates (oracle) is 2.64x and 3.07x better
// than uniform on the two webs, so the index is not what falls short;
// learnt from 40 seconds of visits, with the host's pooled prior, it is
// 1.49x and 1.60x (a Bayesian learner told the true log-uniform spread of
// rates, tried and not kept, did no better: 1.47x to 1.70x on three
// webs): a page is visited only a few times in 40 s, too few to tell one
// that changes every minute from one that changes
// weekly. TestHostPriorLogUniform, with 200 s and three times the
// fetches a page, reaches 2.36x to 2.66x.
func TestIndexAtLiveBudget(t *testing.T) {
	const n, dur, warm = 200, 40.0, 10.0
	slot := 1.0 / 26
	p := Policy{Min: 2 * time.Millisecond}
	for _, seed := range []uint64{19, 0} { // 19: the live measure's intervals
		pages := logUniformWeb(n, 2, 10*86400, dur, seed)
		c := 0
		l := simulateFrom(pages, dur, slot, warm, counted(learntHost(pages, p), &c))
		u := simulateFrom(pages, dur, dur/float64(c+1), warm, uniform(len(pages)))
		o := simulateFrom(pages, dur, slot, warm, oracle(pages, p.WithDefaults()))
		t.Logf("web %d: %d fetches; uniform %.4f, learnt %.4f (%.2fx), index on the true rates %.4f (%.2fx)", seed, c, u, l, u/l, o, u/o)
		if u < 2*o {
			t.Errorf("web %d: the index on the true rates %.4f against uniform's %.4f: not 2x less", seed, o, u)
		}
		if u < 1.3*l {
			t.Errorf("web %d: learnt %.4f against uniform's %.4f: not 1.3x less", seed, l, u)
		}
	}
}
