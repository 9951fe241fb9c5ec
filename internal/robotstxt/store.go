package robotstxt

import (
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/store"
)

// kept are the robots.txt answers of earlier runs, in the crawl's store:
// a restart parses a file it kept again rather than fetching it, and goes
// on counting a failing file's attempts.
type kept struct {
	db    *store.DB
	parts int
}

// put records a good robots.txt answer (Rules or NoRules) of origin,
// which ends its failures: body is the file a Rules policy was parsed
// from (its first robots.MaxBytes are kept, all a parse reads), nil
// otherwise.
func (f kept) put(origin string, pol *robots.Policy, body []byte) error {
	if len(body) > store.MaxRobotsBody {
		body = body[:store.MaxRobotsBody]
	}
	scheme, host := splitOrigin(origin)
	b := f.db.NewBatch()
	b.PutRobots(uint16(partition.Of(host, f.parts)), store.RobotsRecord{
		Host: host, Scheme: scheme, FetchedAt: pol.FetchedAt, Status: pol.Status, Outcome: uint8(pol.Outcome), Body: body,
	})
	return b.Commit(false)
}

// putFailure records the failures of hist, keeping the last good answer
// the store holds (hist.Good is that answer, so only the store has its
// body).
func (f kept) putFailure(origin string, hist *robots.History) error {
	scheme, host := splitOrigin(origin)
	part := uint16(partition.Of(host, f.parts))
	rec, _, err := f.db.GetRobots(part, host, scheme)
	if err != nil {
		return err
	}
	rec.Host, rec.Scheme = host, scheme
	rec.Failures, rec.FailingSince, rec.LastFailure = hist.Failures, hist.FailingSince, hist.LastFailure
	rec.FailStatus, rec.Err = hist.Status, hist.Err
	b := f.db.NewBatch()
	b.PutRobots(part, rec)
	return b.Commit(false)
}

// get returns the robots.txt history an earlier run recorded for origin;
// the zero History if there is none. A record written before robots.txt
// was kept by scheme is not read: which scheme's file it holds is not
// known, so the file is fetched again.
func (f kept) get(origin, token string) (robots.History, error) {
	scheme, host := splitOrigin(origin)
	rec, ok, err := f.db.GetRobots(uint16(partition.Of(host, f.parts)), host, scheme)
	if err != nil || !ok {
		return robots.History{}, err
	}
	h := robots.History{
		Failures: rec.Failures, FailingSince: rec.FailingSince, LastFailure: rec.LastFailure,
		Status: rec.FailStatus, Err: rec.Err,
	}
	switch robots.Outcome(rec.Outcome) {
	case robots.Rules:
		h.Good = robots.FromStatus(rec.Status, rec.Body, token, rec.FetchedAt)
	case robots.NoRules:
		h.Good = robots.NoRulesPolicy(rec.Status, rec.FetchedAt)
	}
	return h, nil // an outcome this build does not know counts as none
}
