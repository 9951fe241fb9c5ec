package weft

import "github.com/weft-crawler/weft/internal/plugin"

// A Consumer is given every page the crawl fetches (robots.txt aside),
// once its response is archived and the crawl's state that records it is
// on disk. Consume is called from many goroutines at once, and the page's
// host waits while it runs, so a slow consumer slows the crawl rather
// than piling pages up in memory. An error stops the crawl: Run returns
// it. A page is given at most once: after a crash, the pages of the last
// moments before it are not given again (the WARC files hold them).
type Consumer = plugin.Consumer

// ConsumerFunc makes a Consumer of a function.
type ConsumerFunc = plugin.ConsumerFunc

// Page is a fetched page as a Consumer receives it. Its slices and maps
// are the crawl's: do not change them, nor keep them past Consume without
// copying. Text returns the text it shows.
type Page = plugin.Page

// Record is where a response is in the WARC files: the file's name under
// DataDir/warc (on disk it ends in ".open" until the crawl finishes it),
// and the byte range of the record's gzip member.
type Record = plugin.Record
