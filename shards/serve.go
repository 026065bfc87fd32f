package shards

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/mcpchaos/mcpchaos/refserver"
)

// startServe starts `mcpchaos serve --from WORKLOAD` on a loopback port and returns its URL
// and a function that stops it (by its PID): SIGTERM, then SIGKILL after childGrace. It holds
// at most maxSessions sessions (0: no cap).
func startServe(bin, workload string, maxSessions int, stderr io.Writer) (string, func(), error) {
	srv := exec.Command(bin, "serve", "--from", workload, "--addr", "127.0.0.1:0", "--max-sessions", strconv.Itoa(maxSessions))
	srv.Stderr = stderr
	srv.SysProcAttr = childAttr()
	out, err := srv.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := srv.Start(); err != nil {
		return "", nil, fmt.Errorf("starting the reference server: %w", err)
	}
	stop := func() {
		_ = srv.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(childGrace):
			_ = srv.Process.Kill()
			<-done
		}
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	url, perr := refserver.ParseReadyLine(line)
	if err != nil || perr != nil {
		stop()
		return "", nil, errors.Join(errors.New("the reference server did not say where it listens"), err, perr)
	}
	return url, stop, nil
}
