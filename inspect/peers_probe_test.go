package inspect

import (
	"bytes"
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients"
	"github.com/mcpchaos/mcpchaos/internal/peers"
)

func TestProbePeers(t *testing.T) {
	for _, p := range []func(testing.TB, peers.Options) *peers.Server{peers.GoSDK, peers.MCPGo, peers.MCPGoRetained, peers.TS} {
		srv := p(t, peers.Options{SessionTTL: 2 * time.Second})
		u, _ := url.Parse(srv.URL)
		fp, err := Inspect(context.Background(), Options{Conn: clients.Conn{URL: u}, TTL: 2 * time.Second, Idle: 3 * time.Second, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		WriteTable(&b, fp)
		t.Logf("%s\n%s\nstats %+v", srv.Name, b.String(), srv.Stats())
	}
}
