package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Reading is what /proc says about a process.
type Reading struct {
	RSS, PSS int64         // bytes resident; their proportional share (shared pages divided)
	FDs      int           // open descriptors
	CPU      time.Duration // user + system time, all its threads, at 10 ms resolution
}

// userHZ is the unit of /proc/PID/stat's times: USER_HZ, 100 on every Linux ABI.
const userHZ = 100

// readProc reads another process from /proc, so that taking the reading costs that process
// nothing.
func ReadProc(pid int) (Reading, error) {
	var p Reading
	rollup, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return p, fmt.Errorf("bench: reading the memory of process %d: %w", pid, err)
	}
	if p.RSS, err = kbField(rollup, "Rss:"); err != nil {
		return p, fmt.Errorf("bench: /proc/%d/smaps_rollup: %w", pid, err)
	}
	if p.PSS, err = kbField(rollup, "Pss:"); err != nil {
		return p, fmt.Errorf("bench: /proc/%d/smaps_rollup: %w", pid, err)
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return p, fmt.Errorf("bench: counting the descriptors of process %d: %w", pid, err)
	}
	p.FDs = len(fds)
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return p, fmt.Errorf("bench: reading the CPU time of process %d: %w", pid, err)
	}
	if p.CPU, err = cpuTime(stat); err != nil {
		return p, fmt.Errorf("bench: /proc/%d/stat: %w", pid, err)
	}
	return p, nil
}

// kbField finds a "Name:   123 kB" line and returns it in bytes.
func kbField(data []byte, name string) (int64, error) {
	for line := range bytes.Lines(data) {
		if v, ok := bytes.CutPrefix(line, []byte(name)); ok {
			v = bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))
			kb, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s %q: %w", name, v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no %s line", name)
}

// cpuTime reads utime + stime from a /proc/PID/stat line. The command name (field 2) may
// hold spaces and parentheses, so fields are counted from its closing parenthesis.
func cpuTime(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	f := bytes.Fields(stat[i+1:]) // f[0] is field 3 (state): utime is field 14, stime 15
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields, want at least 15", len(f)+2)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}
