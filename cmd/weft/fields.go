package main

import (
	"errors"
	"slices"
	"strings"

	"github.com/weft-crawler/weft/internal/settings"
)

// flagFields maps each flag of weft crawl and weft serve that is a
// setting of the crawl to the field of weft.Config it sets (crawlFlags.settings),
// so that whatever the command can do with a crawl, a Go program can do
// too. The flags that set none are flagsWithoutField, in the test that keeps
// the two tables whole: a flag in neither fails it.
var flagFields = map[string]string{
	"seeds": "Seeds", "data": "DataDir", "user-agent": "UserAgent", "fresh": "Fresh",

	"delay": "Delay", "workers": "Workers", "max-pages": "MaxPages", "max-requisites": "MaxRequisites", "max-depth": "MaxDepth",
	"max-urls-per-host": "MaxURLsPerHost", "max-urls-per-pattern": "MaxURLsPerPattern", "trap-budget": "TrapBudget",
	"max-path-repeats": "MaxPathRepeats", "max-redirects": "MaxRedirects",
	"max-links-per-page": "MaxLinksPerPage", "grace": "Grace", "failure-wait": "FailureWait",

	"scope": "ScopeMode", "include": "Include", "exclude": "Exclude", "reject-ext": "RejectExtensions",
	"strip-param": "StripParams",
	// A --handler program is a Handler that weft.NewCommand makes of its
	// CommandConfig: Argv, MediaTypes, Timeout, MaxMemory and Procs.
	"handler": "Handlers", "handler-timeout": "Handlers", "handler-memory": "Handlers", "handler-procs": "Handlers",

	"accept-mime": "AcceptMIME", "reject-mime": "RejectMIME", "max-body": "MaxBodyBytes", "max-body-for": "MaxBodyFor",
	"requisites": "NoRequisites", "with-images": "WithImages", "sitemaps": "NoSitemaps", "sitemap": "Sitemaps", "sitemap-only": "SitemapOnly",

	"render": "RenderMode", "render-chromium": "RenderChromium", "render-workers": "RenderWorkers",
	"render-timeout": "RenderTimeout", "render-idle": "RenderIdle", "render-scrolls": "RenderScrolls",
	"render-clicks": "RenderClicks", "render-screenshot": "RenderScreenshot", "render-memory": "RenderMemory",
	"render-give-up": "RenderGiveUpAfter", "render-navigations": "RenderNavigations",
	"render-behaviour-time": "RenderBehaviourTime",

	"near-dup-threshold": "NearDupThreshold", "near-dup-min-words": "NearDupMinWords",
	"near-dup-max-pages": "NearDupMaxPages", "near-dup-follow": "NearDupFollow", "trap-window": "NearDupTrapWindow",

	"allow-cidr": "AllowNetworks", "deny-cidr": "DenyNetworks", "resolve": "Resolve", "ca-file": "CAFiles",
	"insecure-tls": "InsecureTLS", "cookies": "CookiesFile", "header": "Headers", "http2": "HTTP2", "timeout": "Timeout", "connect-timeout": "ConnectTimeout",
	"header-timeout": "HeaderTimeout", "idle-timeout": "IdleTimeout", "dns-min-ttl": "DNSMinTTL", "dns-max-ttl": "DNSMaxTTL",

	"robots-ttl": "RobotsTTL", "robots-attempts": "RobotsAttempts", "robots-retry": "RobotsRetryWait",
	"robots-last-good": "RobotsLastGood", "max-crawl-delay": "MaxCrawlDelay", "policy": "PolicyFile",

	"latency-factor": "LatencyFactor", "max-backoff": "MaxBackoff", "max-retry-after": "MaxRetryAfter",
	"park-after": "ParkAfter", "park-for": "ParkFor", "give-up-after": "GiveUpAfter",
	"ip-group": "IPGroup", "ip-gap": "IPGap",

	"expected-urls": "ExpectedURLs", "seen-cache": "SeenCacheKeys", "active-hosts": "ActiveHosts",
	"front-buffer": "FrontBuffer", "head-size": "HeadSize", "host-cache": "HostCache", "warc-max-size": "WARCMaxSize",
	"dedup-from": "DedupFrom", "crawl-log": "CrawlLog",

	"s3-endpoint": "S3Endpoint", "s3-bucket": "S3Bucket", "s3-prefix": "S3Prefix", "s3-region": "S3Region",

	"log-level": "Logger",
}

// flagError names the flags of the fields a settings.FieldError names,
// for the person who typed them.
func flagError(err error) error {
	var fe *settings.FieldError
	if !errors.As(err, &fe) {
		return usageError{err}
	}
	var flags []string
	for _, field := range fe.Fields {
		var of []string
		for flag, f := range flagFields {
			if f == field {
				of = append(of, "--"+flag)
			}
		}
		slices.Sort(of)
		flags = append(flags, of...)
	}
	if len(flags) == 0 {
		return usageError{err}
	}
	return usagef("%s: %w", strings.Join(flags, ", "), fe.Err)
}
