package results

import (
	"embed"
	"fmt"
)

//go:embed schema/export.v*.json
var schemas embed.FS

// Schema is the JSON Schema (draft 2020-12) of export schema version v, as published in
// results/schema/export.vN.json.
func Schema(v int) ([]byte, error) {
	data, err := schemas.ReadFile(fmt.Sprintf("schema/export.v%d.json", v))
	if err != nil {
		return nil, fmt.Errorf("no JSON Schema for export schema version %d (this mcpchaos knows 1..%d)", v, SchemaVersion)
	}
	return data, nil
}
