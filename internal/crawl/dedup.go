package crawl

import "context"

// importEarlier imports the payload digests of the earlier crawls of
// Config.DedupFrom into the store, where the archiver finds them as it
// finds this crawl's own: one look-up makes a copy a revisit, of a
// capture here or there. A source imported by an earlier run and not
// changed since is not read again.
func (c *Crawler) importEarlier(ctx context.Context) error {
	for _, src := range c.cfg.DedupFrom {
		im, err := c.arch.Import(ctx, src)
		if err != nil {
			return err
		}
		c.stats.dedupImported.Add(im.Digests)
		c.log.Info("earlier crawl's payload digests imported", "source", im.Source, "kind", im.Kind,
			"digests", im.Digests, "sha256", im.SHA256, "skipped", im.Skipped, "again", im.Again)
	}
	return nil
}
