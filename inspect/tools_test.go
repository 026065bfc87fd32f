package inspect

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcpchaos/mcpchaos/clients/fleet"

	"github.com/google/jsonschema-go/jsonschema"
)

// The arguments inspect sends a tool are a valid instance of its inputSchema, as the schema
// library judges it, for the schemas real servers publish.
func TestMinimalArgsAreValid(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"order_id":{"type":"string","minLength":1},"quantity":{"type":"integer","minimum":1},"priority":{"type":"string","enum":["low","high"]}},"required":["order_id","quantity"]}`,
		`{"type":"object","properties":{"steps":{"type":"integer","minimum":1,"maximum":20}},"required":["steps"],"additionalProperties":false}`,
		`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`,
		`{"type":"object"}`,
		`{"type":"object","properties":{"when":{"type":"number","exclusiveMinimum":0}},"required":["when"]}`,
		`{"type":"object","properties":{"tags":{"type":"array","minItems":2,"items":{"type":"string","minLength":3}}},"required":["tags"]}`,
		`{"type":"object","properties":{"mode":{"const":"fast"},"level":{"type":"integer","default":3},"ok":{"type":"boolean"}},"required":["mode","level","ok"]}`,
		`{"type":"object","properties":{"filter":{"type":"object","properties":{"field":{"type":"string"},"op":{"enum":["eq","ne"]}},"required":["field","op"]}},"required":["filter"]}`,
		`{"type":"object","properties":{"id":{"anyOf":[{"type":"integer","minimum":5},{"type":"string"}]}},"required":["id"]}`,
		`{"type":"object","properties":{"below":{"type":"integer","maximum":-3}},"required":["below"]}`,
	} {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(schema), &s); err != nil {
			t.Fatalf("%s: %v", schema, err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: %v", schema, err)
		}
		args := fleet.MinimalInstance(&s)
		// Round-trip through JSON: the server sees JSON, not Go values.
		data, _ := json.Marshal(args)
		var instance any
		json.Unmarshal(data, &instance)
		if err := rs.Validate(instance); err != nil {
			t.Errorf("%s\nargs %s: %v", schema, data, err)
		}
	}
}

// The tools called for event ids: the likeliest to stream first, never one named like a
// destructive one, at most maxTools; a tool named by the user alone.
func TestPickTools(t *testing.T) {
	list := json.RawMessage(`{"tools":[
		{"name":"delete_user","description":"reports progress"},
		{"name":"lookup","annotations":{"destructiveHint":true}},
		{"name":"get_weather","annotations":{"readOnlyHint":true}},
		{"name":"export","description":"a long-running export that reports progress"},
		{"name":"echo"},
		{"name":"add"}]}`)
	var got []string
	for _, tool := range pickTools(list, "") {
		got = append(got, tool.Name)
	}
	if want := []string{"export", "get_weather", "echo"}; !slices.Equal(got, want) {
		t.Errorf("picked %v, want %v", got, want)
	}
	if named := pickTools(list, "delete_user"); len(named) != 1 || named[0].Name != "delete_user" {
		t.Errorf("named tool: %v", named)
	}
	if none := pickTools(list, "absent"); len(none) != 0 {
		t.Errorf("an absent named tool picked %v", none)
	}
}
