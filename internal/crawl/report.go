package crawl

import "github.com/weft-crawler/weft/internal/report"

// What a crawl reports is defined in package report; these names keep the
// crawl's API in one place for its callers.
type (
	Summary       = report.Summary
	Progress      = report.Progress
	HostPages     = report.HostPages
	HostCause     = report.HostCause
	DeferredHost  = report.DeferredHost
	SeedFailure   = report.SeedFailure
	RenderSummary = report.RenderSummary
)
