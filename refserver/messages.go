package refserver

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The MCP messages the server sends, and the parameters it reads.

type initializeParams struct {
	ProtocolVersion string `json:"protocolVersion"`
}

type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type initializeResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	ServerInfo      implementation `json:"serverInfo"`
}

type tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	InputSchema any    `json:"inputSchema"`
}

type toolList struct {
	Tools []tool `json:"tools"`
}

var tools = toolList{Tools: []tool{
	{
		Name:        "echo",
		Description: "Returns its text.",
		InputSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"text": map[string]any{"type": "string"}},
			"required":   []string{"text"},
		},
	},
	{
		Name:        "slow",
		Description: "Sends progress notifications (to the request's progress token) at intervals, then returns.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"steps":   map[string]any{"type": "integer", "minimum": 0, "maximum": 100},
			"step_ms": map[string]any{"type": "integer", "minimum": 0, "maximum": 5000},
		}},
	},
}}

type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      struct {
		ProgressToken json.RawMessage `json:"progressToken"`    // echoed as sent
		Call          string          `json:"io.mcpchaos/call"` // mcpwire.CallKey: the logical call
	} `json:"_meta"`
}

type echoArgs struct {
	Text *string `json:"text"`
}

type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type callResult struct {
	Content []content `json:"content"`
}

func textResult(text string) callResult {
	return callResult{Content: []content{{Type: "text", Text: text}}}
}

type progressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      int             `json:"progress"`
	Total         int             `json:"total"`
}

func rpcError(code int64, format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// encodeResponse encodes the response to request id: result, or rpcErr if it
// is not nil.
func encodeResponse(id jsonrpc.ID, result any, rpcErr *jsonrpc.Error) []byte {
	resp := &jsonrpc.Response{ID: id}
	if rpcErr != nil {
		resp.Error = rpcErr
	} else {
		resp.Result = mustJSON(result)
	}
	return mustEncode(resp)
}

func progressMessage(token json.RawMessage, progress, total int) []byte {
	return mustEncode(&jsonrpc.Request{
		Method: "notifications/progress",
		Params: mustJSON(progressParams{ProgressToken: token, Progress: progress, Total: total}),
	})
}

// logMessage is the notifications/message the ticker emits, numbered by seq
// within its session. It is assembled by hand because the ticker builds one
// per live session per interval; TestLogMessage checks it decodes.
func logMessage(seq uint64) []byte {
	const (
		prefix = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"` + ServerName + `","data":{"seq":`
		suffix = `}}}`
	)
	b := make([]byte, 0, len(prefix)+20+len(suffix))
	b = append(b, prefix...)
	b = strconv.AppendUint(b, seq, 10)
	return append(b, suffix...)
}

// mustJSON and mustEncode encode the server's own values, which always
// encode; a failure is a bug in this package.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("target: encoding %T: %v", v, err))
	}
	return b
}

func mustEncode(msg jsonrpc.Message) []byte {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		panic(fmt.Sprintf("target: encoding %T: %v", msg, err))
	}
	return b
}
