package generator

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// schedstat sums the process's threads' time on a CPU and time runnable but waiting for one
// (/proc/self/task/*/schedstat: run ns, wait ns, timeslices). ok is false where the kernel
// does not keep it.
func schedstat() (run, wait time.Duration, ok bool) {
	files, _ := filepath.Glob("/proc/self/task/*/schedstat")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		fs := strings.Fields(string(data))
		if len(fs) < 2 {
			continue
		}
		r, err1 := strconv.ParseInt(fs[0], 10, 64)
		w, err2 := strconv.ParseInt(fs[1], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		run += time.Duration(r)
		wait += time.Duration(w)
		ok = true
	}
	return run, wait, ok
}
