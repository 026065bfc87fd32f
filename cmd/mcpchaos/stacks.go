package main

import (
	"os"
	"runtime"
	"strings"
	"syscall"
)

// smallStacks restarts the process in place (same PID, same arguments) with
// GODEBUG=adaptivestackstart=0, unless GODEBUG already says how to start stacks.
//
// Why: a held session's goroutine idles in a stream read that needs a little over 2 KiB of
// stack, so once its stack is 8 KiB the collector never halves it (a stack shrinks only while
// under a quarter used). With the runtime's adaptive starting stack (on by default), goroutines
// start at the average stack size seen at the previous collection, and whether that average
// came out at 4 or 8 KiB decided, run by run, whether a held session cost 4 or 8 KiB of stack:
// `mcpchaos bench --sessions 3000` measured 4.2 KiB in some runs and 7.8 in others of the same
// build. Started at 2 KiB, goroutines grow to what they use, and a held session costs 4 KiB.
// The setting is read only at process start (it cannot be set in go.mod or by //go:debug), so
// the process execs itself once; where that is not possible it runs on as it is.
func smallStacks() {
	if runtime.GOOS != "linux" {
		return
	}
	godebug := os.Getenv("GODEBUG")
	if strings.Contains(godebug, "adaptivestackstart=") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if godebug != "" {
		godebug += ","
	}
	env := []string{"GODEBUG=" + godebug + "adaptivestackstart=0"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	_ = syscall.Exec(exe, os.Args, env) // returns only on failure: then run on unchanged
}
