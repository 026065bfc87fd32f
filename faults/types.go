package faults

import "github.com/mcpchaos/mcpchaos/workloads/vocab"

// The fault types and their attributes are a workload file's words: they are defined, and
// checked (vocab.ValidateToxic), in package vocab, so that reading a workload needs nothing
// of this package.

// TypeDown is the fault that takes a whole proxy away for its window: the listener is closed
// and open connections are cut, like a proxy restart or an outage; afterwards the proxy
// listens again on the same address.
const TypeDown = vocab.ToxicDown

// integral reads an attribute vocab.ValidateToxic accepted as an int64.
func integral(v any) (int64, bool) { return vocab.Integer(v) }

// ValidateToxic checks a fault's type and attributes (vocab.ValidateToxic); every Injector
// checks a Toxic with it before applying it.
func ValidateToxic(typ string, attrs map[string]any) error { return vocab.ValidateToxic(typ, attrs) }
