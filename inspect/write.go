package inspect

import (
	"encoding/json"

	"github.com/mcpchaos/mcpchaos/internal/atomicfile"
)

// WriteJSONFile writes the fingerprint as indented JSON, atomically (internal/atomicfile), so
// that no reader ever sees half of it.
func WriteJSONFile(path string, fp *Fingerprint) error {
	data, err := json.MarshalIndent(fp, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'))
}
