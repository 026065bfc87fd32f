package refserver

import (
	"bufio"
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestKeepaliveShapesOnTheWire reads each shape's keep-alives as raw bytes off a GET stream,
// between the notifications that carry ids: a keep-alive must be exactly the shape's block and
// must never move the stream's cursor.
func TestKeepaliveShapesOnTheWire(t *testing.T) {
	const note = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","logger":"` + ServerName + `","data":"keepalive"}}`
	for _, tc := range []struct {
		shape string
		block string // one keep-alive as sent, "" for none
	}{
		{"", ": ping\n\n"}, // Keepalive alone means comments, as before shapes existed
		{KeepaliveComment, ": ping\n\n"},
		{KeepaliveEvent, "event: ping\ndata: " + note + "\n\n"},
		{KeepaliveNoID, "data: " + note + "\n\n"},
		{KeepaliveNone, ""},
	} {
		t.Run("shape="+tc.shape, func(t *testing.T) {
			// Keep-alives every 2 ms, notifications every 40 ms: a shape that sends anything
			// sends it many times between two notifications.
			_, url := serve(t, Config{Keepalive: 2 * time.Millisecond, KeepaliveShape: tc.shape, NotifyInterval: 40 * time.Millisecond})
			c := mustInit(t, url)
			resp := c.get("")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET: status %d", resp.StatusCode)
			}
			defer resp.Body.Close()
			stop := time.AfterFunc(waitLimit, func() { resp.Body.Close() }) // bounds every read below
			defer stop.Stop()
			r := bufio.NewReader(resp.Body)
			if first := readBlock(t, r); !strings.HasPrefix(first, "id: ") || !strings.HasSuffix(first, "\ndata: \n\n") {
				t.Fatalf("first block %q: want the priming event", first)
			}
			notifications, keepalives := 0, 0
			for notifications < 2 || tc.block != "" && keepalives < 3 {
				switch b := readBlock(t, r); {
				case strings.HasPrefix(b, "id: ") && strings.Contains(b, `"seq":`):
					notifications++
				case tc.block != "" && b == tc.block:
					keepalives++
				default:
					t.Fatalf("block %q after %d notifications and %d keep-alives: want notifications and %q only", b, notifications, keepalives, tc.block)
				}
			}
		})
	}
}

// readBlock reads one SSE block, through its blank line, as raw bytes.
func readBlock(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	var b bytes.Buffer
	for !bytes.HasSuffix(b.Bytes(), []byte("\n\n")) {
		line, err := r.ReadBytes('\n')
		b.Write(line)
		if err != nil {
			t.Fatalf("stream ended after %q: %v", b.String(), err)
		}
	}
	return b.String()
}

func TestKeepaliveConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Keepalive: time.Second, KeepaliveShape: "pong"}, `keepalive shape "pong": want one of`},
		{Config{KeepaliveShape: KeepaliveEvent}, `keepalive shape "event" needs an interval`},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if err := (Config{KeepaliveShape: KeepaliveNone}).Validate(); err != nil {
		t.Errorf("keepalive shape none without an interval: %v", err)
	}
}
