package mcpwire

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeMessage must agree with the SDK's decoder on every message, valid or not.
func TestDecodeAgreesWithSDK(t *testing.T) {
	for _, in := range jsonrpcSeeds {
		mine, myErr := Decode([]byte(in))
		sdk, sdkErr := jsonrpc.DecodeMessage([]byte(in))
		if (myErr == nil) != (sdkErr == nil) {
			t.Errorf("%s: mine err %v, sdk err %v", in, myErr, sdkErr)
			continue
		}
		if myErr != nil {
			continue
		}
		a, _ := jsonrpc.EncodeMessage(mine)
		b, _ := jsonrpc.EncodeMessage(sdk)
		if string(a) != string(b) {
			t.Errorf("%s:\n mine %s\n sdk  %s", in, a, b)
		}
	}
}

var jsonrpcSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":"abc","result":{"content":[{"type":"text","text":"hi"}]}}`,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not found"}}`,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"m","data":{"x":1}}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`,
	`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	`{"jsonrpc":"2.0","method":""}`,
	`{"jsonrpc":"1.0","id":1,"result":{}}`,
	`{"id":1,"result":{}}`,
	`{"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`,
	`{"jsonrpc":"2.0","id":true,"result":{}}`,
	`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
	`{"jsonrpc":"2.0","id":[1],"result":{}}`,
	`not json`,
	``,
	`{"jsonrpc":"2.0","id":1,"result":{}} trailing`,
	`[]`,
}

func FuzzDecode(f *testing.F) {
	for _, s := range jsonrpcSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err == nil && m == nil {
			t.Fatal("nil message without an error")
		}
	})
}

func BenchmarkDecodeMessage(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"mcpchaos"}]}}`)
	b.Run("mcpchaos", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
