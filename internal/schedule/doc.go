// Package schedule keeps a continuous crawl's recrawl schedule in the
// crawl's store: when each fetched URL is due again and why (Planner:
// what each visit taught, each host's change-rate prior, the URL's
// importance from its in-links and sitemaps), and the scan that queues
// the due URLs again (Recrawler), with what sitemaps said of known URLs
// since the last scan. The arithmetic of a policy is package recrawl's;
// this package applies it to the crawl's records and keeps the recrawl
// index (store.DueEntry) in step with them.
package schedule
