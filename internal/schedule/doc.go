// Package schedule keeps what a continuous crawl's recrawl schedule is
// made of in the crawl's store: the in-link counts that weigh in a URL's
// importance.
package schedule
