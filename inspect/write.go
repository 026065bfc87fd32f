package inspect

import (
	"encoding/json"
	"os"

	"github.com/mcpchaos/mcpchaos/outfile"
)

// WriteJSONFile writes the fingerprint as indented JSON as outfile writes (a regular file
// atomically, a device or FIFO in place, "-" to stdout), so no reader ever sees half of it.
func WriteJSONFile(path string, fp *Fingerprint) error {
	data, err := json.MarshalIndent(fp, "", "  ")
	if err != nil {
		return err
	}
	return outfile.Write(path, os.Stdout, append(data, '\n'))
}
