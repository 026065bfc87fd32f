package inspect

import (
	"encoding/json"

	"github.com/mcpchaos/mcpchaos/results"
)

// WriteJSONFile writes the fingerprint as indented JSON, atomically (results.WriteAtomic), so
// that no reader ever sees half of it.
func WriteJSONFile(path string, fp *Fingerprint) error {
	data, err := json.MarshalIndent(fp, "", "  ")
	if err != nil {
		return err
	}
	return results.WriteAtomic(path, append(data, '\n'))
}
