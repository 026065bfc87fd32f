package inspect

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// WriteJSONFile writes the fingerprint as indented JSON, atomically: a temporary file in the
// same directory, then a rename, so that no reader ever sees half of it.
func WriteJSONFile(path string, fp *Fingerprint) (err error) {
	data, err := json.MarshalIndent(fp, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(append(data, '\n')); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
