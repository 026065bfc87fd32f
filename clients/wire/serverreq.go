package wire

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// Root is one of the client's roots, as roots/list answers it (a workload's `roots`).
type Root = vocab.Root

// The requests a server may send its client, as counted in the export.
const (
	MethodPing        = "ping"
	MethodRootsList   = "roots/list"
	MethodSampling    = vocab.MethodSampling // a workload may script its answer
	MethodElicitation = vocab.MethodElicitation
	methodOther       = "other"
)

var serverMethods = []string{MethodPing, MethodRootsList, MethodSampling, MethodElicitation, methodOther}

// ServerMethods lists the server-to-client requests the export counts, "other" last.
func ServerMethods() []string { return slices.Clone(serverMethods) }

// Responder answers the requests a server sends a group's clients, on POST replies and GET
// streams alike, and decides what initialize advertises: only what it serves. ping is always
// answered; roots/list with Roots when they are set (roots advertised); sampling/createMessage
// and elicitation/create with the scripted result in Replies (capability advertised) or else
// a JSON-RPC error, as is any other method. A server request never goes unanswered.
type Responder struct {
	Roots   []Root                     // nil: roots not advertised, roots/list refused
	Replies map[string]json.RawMessage // scripted results by method (sampling, elicitation)

	// Recorder, when set (the fleet sets its group's), counts each answer in server_requests.
	Recorder *metrics.Recorder
	answered [5]atomic.Int64 // by serverMethods
	refused  [5]atomic.Int64 // answered with a JSON-RPC error
}

// capabilities are what initialize advertises.
func (r *Responder) capabilities() map[string]any {
	caps := map[string]any{}
	if r == nil {
		return caps
	}
	if r.Roots != nil {
		caps["roots"] = map[string]any{}
	}
	if _, ok := r.Replies[MethodSampling]; ok {
		caps["sampling"] = map[string]any{}
	}
	if _, ok := r.Replies[MethodElicitation]; ok {
		caps["elicitation"] = map[string]any{}
	}
	return caps
}

// reply is the answer to a server request: a result, or a JSON-RPC error.
func (r *Responder) reply(method string) (any, *jsonrpc.Error) {
	switch {
	case method == MethodPing:
		return struct{}{}, nil
	case method == MethodRootsList && r != nil && r.Roots != nil:
		return struct {
			Roots []Root `json:"roots"`
		}{r.Roots}, nil
	case r != nil && r.Replies[method] != nil:
		return r.Replies[method], nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpchaos does not serve " + method}
}

func (r *Responder) count(method string, refused bool) {
	if r == nil {
		return
	}
	i := slices.Index(serverMethods, method)
	if i < 0 {
		i = len(serverMethods) - 1
	}
	r.answered[i].Add(1)
	if refused {
		r.refused[i].Add(1)
	}
	if r.Recorder != nil {
		r.Recorder.Inc(metrics.ServerRequests)
	}
}

// Answered counts the server requests answered, by method (those answered with a JSON-RPC
// error included); methods never asked are left out.
func (r *Responder) Answered() map[string]int64 {
	out := map[string]int64{}
	if r == nil {
		return out
	}
	for i, m := range serverMethods {
		if n := r.answered[i].Load(); n > 0 {
			out[m] = n
		}
	}
	return out
}

// Answer answers a server request with a POST carrying the response, within the request
// timeout. A request that could not be answered (the POST failed) is not counted.
func (s *Session) Answer(ctx context.Context, req *jsonrpc.Request) {
	if !req.IsCall() {
		return
	}
	res, rpcErr := s.ep.Responder.reply(req.Method)
	resp := &jsonrpc.Response{ID: req.ID}
	if rpcErr != nil {
		resp.Error = rpcErr
	} else {
		b, err := json.Marshal(res)
		if err != nil {
			return
		}
		resp.Result = b
	}
	body, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.ep.RequestTimeout)
	defer cancel()
	hr, err := s.send(ctx, body, nil, nil)
	if err != nil {
		return
	}
	drain(hr.Body)
	if hr.StatusCode/100 == 2 || hr.StatusCode == http.StatusAccepted {
		s.ep.Responder.count(req.Method, rpcErr != nil)
	}
}
