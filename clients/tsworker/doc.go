// Package tsworker is the node worker that holds the TypeScript SDKs' clients (worker.mjs,
// locked by package-lock.json) and its Go side. worker.go starts one node process, speaks its
// JSON-lines protocol (open, list, call, close; opened, listed, result, ended), fails whatever
// waits once the process exits, and ends it by its handle. It knows nothing of groups,
// sessions or metrics: clients/fleet/libdriver pools the workers and counts.
//
// The script is embedded in the binary with its package.json and lock (tsworker.go) and
// written beside the libraries it runs with, never read from the source tree, so a binary
// built with -trimpath, installed by go install or copied into an image runs the worker it was
// built with. The libraries cannot be embedded (node loads them from node_modules):
// `mcpchaos setup ts-libraries` installs them (Install: npm ci against the embedded lock) into
// InstallDir, the user's cache directory by default. Locate finds them there, in
// $MCPCHAOS_TS_WORKER_DIR, or in a tsworker directory beside the binary.
package tsworker
