//go:build !unix

package warc

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
