// Package engine runs a workload: it starts the reference server (or reaches a target by
// URL), one Toxiproxy proxy per client group in front of it, the client fleets and the fault
// schedule; watches the target's health; feeds observers (progress, live metrics, the
// timeline, the threshold watchdog) while the run goes on; and assembles the export.
//
// A run is started from Go with a Plan and Run:
//
//	w, _ := workloads.Builtin("seed-incident-fast")
//	plan, err := engine.NewPlan(w)
//	exp, err := engine.Run(ctx, plan)
//
// A Plan is what NewPlan checked: it holds its own copy of the workload, so changing w after
// NewPlan changes nothing; Run refuses a nil or zero Plan with a ConfigError.
//
// Run returns an export whenever anything started, interrupted and failed runs included,
// with the reason in exp.Run.Error. Its errors are typed (ConfigError, SetupError,
// MeasureError, PanicError, AbortError, ErrInterrupted) for the caller to map; the engine
// itself never prints a summary, writes files, parses flags or decides exit codes. Every run
// keeps its own state (panic guard, proxies, observers): several runs may go on in one
// process at once.
package engine
