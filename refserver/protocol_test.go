package refserver

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestInitialize(t *testing.T) {
	for _, mode := range []string{PostSSE, PostJSON} {
		for _, tc := range []struct{ asked, want string }{
			{"2025-11-25", "2025-11-25"},
			{"2025-06-18", "2025-06-18"},
			{"2025-03-26", "2025-03-26"},
			{"2026-07-28", "2025-11-25"}, // stateless revision: not spoken here
			{"1999-01-01", "2025-11-25"},
		} {
			t.Run(mode+"/"+tc.asked, func(t *testing.T) {
				_, url := serve(t, Config{PostResponse: mode, Retry: 1500 * time.Millisecond})
				c := newClient(t, url)
				resp := c.post("initialize", map[string]any{"protocolVersion": tc.asked})
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d", resp.StatusCode)
				}
				id := resp.Header.Get("Mcp-Session-Id")
				if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) {
					t.Fatalf("Mcp-Session-Id %q: want 32 hex digits", id)
				}
				a := readAnswer(t, resp)
				var res struct {
					ProtocolVersion string                     `json:"protocolVersion"`
					Capabilities    map[string]json.RawMessage `json:"capabilities"`
					ServerInfo      implementation             `json:"serverInfo"`
				}
				a.result(t, &res)
				if res.ProtocolVersion != tc.want {
					t.Errorf("protocolVersion %q, want %q", res.ProtocolVersion, tc.want)
				}
				if res.ServerInfo.Name != ServerName {
					t.Errorf("serverInfo %+v", res.ServerInfo)
				}
				if res.Capabilities["tools"] == nil || res.Capabilities["logging"] == nil {
					t.Errorf("capabilities %v: want tools and logging", res.Capabilities)
				}
				if mode == PostJSON {
					if len(a.events) != 0 {
						t.Errorf("JSON answer has SSE events")
					}
					return
				}
				// SSE: a priming event (id, retry, empty data), then the response.
				if len(a.events) != 2 {
					t.Fatalf("events %+v: want priming and response", a.events)
				}
				priming, response := a.events[0], a.events[1]
				if priming.data != "" || priming.retry != "1500" {
					t.Errorf("priming event %+v: want empty data and retry 1500", priming)
				}
				if tc.want < "2025-11-25" { // no priming for older clients: the retry field alone
					if priming.id != "" {
						t.Errorf("a %s client got a priming event %+v: want the retry field alone", tc.want, priming)
					}
					return
				}
				if priming.ID(t) >= response.ID(t) {
					t.Errorf("event ids %s then %s: want increasing", priming.id, response.id)
				}
			})
		}
	}
}

func TestSessionIDsAreDistinct(t *testing.T) {
	_, url := serve(t, Config{})
	seen := map[string]bool{}
	for range 20 {
		id := mustInit(t, url).session
		if seen[id] {
			t.Fatalf("session id %s issued twice", id)
		}
		seen[id] = true
	}
}

func TestMethods(t *testing.T) {
	for _, mode := range []string{PostSSE, PostJSON} {
		t.Run(mode, func(t *testing.T) {
			_, url := serve(t, Config{PostResponse: mode})
			c := mustInit(t, url)

			var empty map[string]any
			c.call("ping", nil).result(t, &empty)
			if len(empty) != 0 {
				t.Errorf("ping result %v, want {}", empty)
			}

			var list struct {
				Tools []struct {
					Name        string         `json:"name"`
					InputSchema map[string]any `json:"inputSchema"`
				} `json:"tools"`
			}
			c.call("tools/list", nil).result(t, &list)
			var names []string
			for _, tl := range list.Tools {
				names = append(names, tl.Name)
				if tl.InputSchema["type"] != "object" {
					t.Errorf("tool %s input schema %v", tl.Name, tl.InputSchema)
				}
			}
			if strings.Join(names, ",") != "echo,slow" {
				t.Errorf("tools %v, want echo and slow", names)
			}

			var echoed callResult
			c.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi there"}}).result(t, &echoed)
			if len(echoed.Content) != 1 || echoed.Content[0] != (content{Type: "text", Text: "hi there"}) {
				t.Errorf("echo result %+v", echoed)
			}

			for _, tc := range []struct {
				name   string
				method string
				params any
				code   int64
			}{
				{"unknown tool", "tools/call", map[string]any{"name": "nope"}, jsonrpc.CodeInvalidParams},
				{"echo without text", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}}, jsonrpc.CodeInvalidParams},
				{"unknown method", "resources/list", nil, jsonrpc.CodeMethodNotFound},
			} {
				if got := c.call(tc.method, tc.params).errorCode(t); got != tc.code {
					t.Errorf("%s: error code %d, want %d", tc.name, got, tc.code)
				}
			}
		})
	}
}

func TestSlowSendsProgress(t *testing.T) {
	_, url := serve(t, Config{SlowSteps: 3, SlowStep: 5 * time.Millisecond})
	c := mustInit(t, url)

	a := c.call("tools/call", map[string]any{"name": "slow", "_meta": map[string]any{"progressToken": "tok-1"}})
	var res callResult
	a.result(t, &res)
	if len(a.events) != 5 {
		t.Fatalf("events %+v: want priming, 3 progress, response", a.events)
	}
	var last uint64
	for i, e := range a.events {
		if id := e.ID(t); id <= last {
			t.Errorf("event %d id %d after %d: want increasing", i, id, last)
		} else {
			last = id
		}
		if i == 0 || i == 4 {
			continue
		}
		msg, err := jsonrpc.DecodeMessage([]byte(e.data))
		if err != nil {
			t.Fatal(err)
		}
		req := msg.(*jsonrpc.Request)
		var p struct {
			ProgressToken string `json:"progressToken"`
			Progress      int    `json:"progress"`
			Total         int    `json:"total"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			t.Fatal(err)
		}
		if req.Method != "notifications/progress" || p.ProgressToken != "tok-1" || p.Progress != i || p.Total != 3 {
			t.Errorf("event %d: %s %s", i, req.Method, req.Params)
		}
	}

	// Without a progress token: no notifications, just the result.
	if a := c.call("tools/call", map[string]any{"name": "slow"}); len(a.events) != 2 {
		t.Errorf("events without token %+v: want priming and response", a.events)
	}
}

func TestSlowInJSONMode(t *testing.T) {
	_, url := serve(t, Config{PostResponse: PostJSON, SlowStep: time.Millisecond})
	c := mustInit(t, url)
	var res callResult
	c.call("tools/call", map[string]any{"name": "slow", "_meta": map[string]any{"progressToken": 7}}).result(t, &res)
	if len(res.Content) != 1 {
		t.Errorf("slow result %+v", res)
	}
}

func TestNotificationsAndResponsesAreAccepted(t *testing.T) {
	srv, url := serve(t, Config{})
	c := mustInit(t, url)
	for _, body := range []string{
		message(0, "notifications/initialized", nil),
		`{"jsonrpc":"2.0","id":99,"result":{}}`,
	} {
		resp := c.request(http.MethodPost, body)
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusAccepted || len(data) != 0 {
			t.Errorf("POST %s: status %d body %q, want 202 and no body", body, resp.StatusCode, data)
		}
	}
	if got := srv.Stats().DeadRequests; got != 0 {
		t.Errorf("dead requests %d", got)
	}
}

func TestRejections(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    Config
		method string
		body   string
		header []string // name/value pairs; "" removes a header
		status int
		want   string // in the body
		ctype  string
	}{
		{name: "missing session id", method: "POST", body: message(5, "ping", nil), header: []string{"Mcp-Session-Id", ""}, status: 400},
		{name: "missing session id on GET", method: "GET", header: []string{"Mcp-Session-Id", ""}, status: 400},
		{name: "missing session id on DELETE", method: "DELETE", header: []string{"Mcp-Session-Id", ""}, status: 400},
		{name: "unsupported protocol version", method: "POST", body: message(5, "ping", nil), header: []string{"MCP-Protocol-Version", "2026-07-28"}, status: 400},
		{name: "unsupported protocol version on GET", method: "GET", header: []string{"MCP-Protocol-Version", "1.0"}, status: 400},
		{name: "no protocol version header is 2025-03-26", method: "POST", body: message(5, "ping", nil), header: []string{"MCP-Protocol-Version", ""}, status: 200},
		{name: "Accept without event-stream", method: "POST", body: message(5, "ping", nil), header: []string{"Accept", "application/json"}, status: 406},
		{name: "GET without event-stream", method: "GET", header: []string{"Accept", "application/json"}, status: 406},
		{name: "unknown session", method: "POST", body: message(5, "ping", nil), header: []string{"Mcp-Session-Id", strings.Repeat("ab", 16)}, status: 404, want: `{"error":"session expired"}`, ctype: "application/json"},
		{name: "unknown session on a notification", method: "POST", body: message(0, "notifications/initialized", nil), header: []string{"Mcp-Session-Id", strings.Repeat("ab", 16)}, status: 404},
		{name: "garbage session id", method: "POST", body: message(5, "ping", nil), header: []string{"Mcp-Session-Id", "not-a-session"}, status: 404},
		{name: "unknown session on GET", method: "GET", header: []string{"Mcp-Session-Id", strings.Repeat("ab", 16)}, status: 404},
		{name: "unknown session on DELETE", method: "DELETE", header: []string{"Mcp-Session-Id", strings.Repeat("ab", 16)}, status: 404},
		{
			name: "dead status and body as configured", cfg: Config{DeadStatus: 410, DeadBody: "gone"},
			method: "POST", body: message(5, "ping", nil), header: []string{"Mcp-Session-Id", strings.Repeat("cd", 16)},
			status: 410, want: "gone", ctype: "text/plain; charset=utf-8",
		},
		{name: "body too large", method: "POST", body: `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", maxBodyBytes) + `"}}`, status: 413},
		{name: "not JSON-RPC", method: "POST", body: `{"hello":1}`, status: 400, want: `"code":-32700`},
		{name: "foreign origin", method: "POST", body: message(5, "ping", nil), header: []string{"Origin", "https://evil.example"}, status: 403},
		{name: "loopback origin", method: "POST", body: message(5, "ping", nil), header: []string{"Origin", "http://localhost:3000"}, status: 200},
		{name: "loopback IP origin", method: "POST", body: message(5, "ping", nil), header: []string{"Origin", "http://127.0.0.1:3000"}, status: 200},
		{name: "other method", method: "PUT", body: "{}", status: 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, url := serve(t, tc.cfg)
			c := mustInit(t, url)
			resp := c.request(tc.method, tc.body, tc.header...)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (body %q)", resp.StatusCode, tc.status, body)
			}
			if !strings.Contains(string(body), tc.want) {
				t.Errorf("body %q, want it to contain %q", body, tc.want)
			}
			if tc.ctype != "" && resp.Header.Get("Content-Type") != tc.ctype {
				t.Errorf("content type %q, want %q", resp.Header.Get("Content-Type"), tc.ctype)
			}
		})
	}
}

func TestDuplicateGetConflicts(t *testing.T) {
	srv, url := serve(t, Config{})
	c := mustInit(t, url)
	first := openStream(t, c.get(""))
	first.next() // priming: the stream is registered

	if resp := c.get(""); resp.StatusCode != http.StatusConflict {
		t.Fatalf("second GET: status %d, want 409", resp.StatusCode)
	}
	first.drop()
	eventually(t, "the first stream to close", func() bool { return srv.Stats().StreamsOpen == 0 })
	openStream(t, c.get("")).next()
}

// TestResumeTakesTheStreamOver: a replay may arrive before the server has
// noticed that the dropped connection is gone (or ever will: a load
// balancer's idle timeout can leave it half-open). The resume wins.
func TestResumeTakesTheStreamOver(t *testing.T) {
	srv, url := serve(t, Config{})
	c := mustInit(t, url)
	first := openStream(t, c.get(""))
	cursor := first.next().id

	second := openStream(t, c.get(cursor))
	second.next()
	first.ends()
	srv.notifyAll(nil, -1)
	if got := notificationSeq(t, second.message().data); got != 1 {
		t.Fatalf("seq %d", got)
	}
	if resp := c.get(""); resp.StatusCode != http.StatusConflict {
		t.Fatalf("fresh GET beside the resumed stream: status %d, want 409", resp.StatusCode)
	}
}

// TestStreamConflictRefusesTheResume: with StreamConflict the server answers a resume of the
// GET stream 409 while another connection holds it, as the Go and TS SDK servers do, and
// accepts it once that connection has ended.
func TestStreamConflictRefusesTheResume(t *testing.T) {
	srv, url := serve(t, Config{StreamConflict: true})
	c := mustInit(t, url)
	first := openStream(t, c.get(""))
	cursor := first.next().id

	if resp := c.get(cursor); resp.StatusCode != http.StatusConflict {
		t.Fatalf("resume beside the open stream: status %d, want 409", resp.StatusCode)
	}
	first.drop()
	eventually(t, "the first stream to close", func() bool { return srv.Stats().StreamsOpen == 0 })
	openStream(t, c.get(cursor)).next()
}

func TestNotificationsAndKeepalives(t *testing.T) {
	srv, url := serve(t, Config{NotifyInterval: 2 * time.Millisecond, Keepalive: 2 * time.Millisecond})
	c := mustInit(t, url)
	s := openStream(t, c.get(""))
	priming := s.next()
	if priming.data != "" || priming.id == "" {
		t.Fatalf("first event %+v: want priming", priming)
	}
	// The first notification may have gone out before the GET: a fresh
	// stream starts with what comes after it, then misses nothing.
	var seq uint64
	notifications, keepalives := 0, 0
	for notifications < 5 || keepalives == 0 {
		e := s.next()
		switch {
		case e.comment != "":
			if e.comment != ": ping" {
				t.Fatalf("comment %q", e.comment)
			}
			keepalives++
		default:
			got := notificationSeq(t, e.data)
			if seq != 0 && got != seq+1 {
				t.Fatalf("notification seq %d after %d: want consecutive (none missed on an open stream)", got, seq)
			}
			seq = got
			notifications++
		}
	}
	if st := srv.Stats(); st.StreamsOpen != 1 || st.SessionsLive != 1 || st.EventsEmitted < 5 {
		t.Errorf("stats %+v", st)
	}
}

func TestLogMessageDecodes(t *testing.T) {
	if got := notificationSeq(t, string(logMessage(18446744073709551615))); got != 18446744073709551615 {
		t.Errorf("seq %d", got)
	}
}

func TestStartAndClose(t *testing.T) {
	inst, err := Start("127.0.0.1:0", Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(inst.URL, "/mcp") || !strings.Contains(inst.URL, inst.Addr) {
		t.Fatalf("URL %q, addr %q", inst.URL, inst.Addr)
	}
	c := mustInit(t, inst.URL)
	s := openStream(t, c.get(""))
	s.next()

	other := newClient(t, strings.TrimSuffix(inst.URL, "/mcp")+"/elsewhere")
	if resp := other.post("initialize", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("other path: status %d, want 404", resp.StatusCode)
	}

	start := time.Now()
	if err := inst.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v with a stream open", d)
	}
	s.ends()
	if err := inst.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestStartRejectsBadConfig(t *testing.T) {
	if _, err := Start("127.0.0.1:0", Config{PostResponse: "xml"}); err == nil {
		t.Fatal("Start accepted post response xml")
	}
}

func TestConfig(t *testing.T) {
	d := Config{}.WithDefaults()
	if d.RetentionEvents != 1024 || d.GetValidation != Permissive || d.DeadStatus != 404 ||
		d.DeadBody != `{"error":"session expired"}` || d.UnknownCursorStatus != 400 ||
		d.PostResponse != PostSSE || d.SlowSteps != 3 || d.SlowStep != 50*time.Millisecond || d.Now == nil {
		t.Errorf("defaults %+v", d)
	}
	if got := (Config{SlowSteps: -1}).WithDefaults().SlowSteps; got != 0 {
		t.Errorf("SlowSteps -1 became %d, want 0", got)
	}
	for _, tc := range []struct {
		cfg Config
		ok  bool
	}{
		{Config{}, true},
		{Config{GetValidation: Strict, PostResponse: PostJSON, UnknownCursorStatus: -1, DeadStatus: 200}, true},
		{Config{GetValidation: "lax"}, false},
		{Config{PostResponse: "xml"}, false},
		{Config{SessionTTL: -time.Second}, false},
		{Config{DeadStatus: 1000}, false},
		{Config{UnknownCursorStatus: -2}, false},
		{Config{RetentionEvents: -1}, false},
	} {
		if err := tc.cfg.Validate(); (err == nil) != tc.ok {
			t.Errorf("Validate(%+v) = %v, want ok %v", tc.cfg, err, tc.ok)
		}
	}
}

// The slow tool's arguments set its steps and their pause over the server's defaults (the
// library matrix makes its calls last 5 s this way); values out of range keep the defaults.
func TestSlowArguments(t *testing.T) {
	_, url := serve(t, Config{SlowSteps: 3, SlowStep: 5 * time.Millisecond})
	c := mustInit(t, url)
	for _, tc := range []struct {
		args  map[string]any
		steps int
	}{
		{map[string]any{"steps": 6, "step_ms": 1}, 6},
		{map[string]any{"steps": 0}, 0},
		{map[string]any{"steps": 101, "step_ms": 9000}, 3},
		{nil, 3},
	} {
		a := c.call("tools/call", map[string]any{"name": "slow", "arguments": tc.args, "_meta": map[string]any{"progressToken": "t"}})
		var res callResult
		a.result(t, &res)
		if got := len(a.events) - 2; got != tc.steps {
			t.Errorf("arguments %v: %d progress events, want %d", tc.args, got, tc.steps)
		}
	}
}
