//go:build !linux

package generator

import "time"

// schedstat is Linux's; elsewhere the run-queue wait is not known.
func schedstat() (run, wait time.Duration, ok bool) { return 0, 0, false }
