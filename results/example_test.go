package results_test

import (
	"fmt"

	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
)

// Reading a group's numbers by name: LookupGroup says what is wrong with a name the export
// lacks (here a misspelling) instead of reading zero; Group returns nil for it, whose numbers
// read zero without a panic.
func ExampleExport_LookupGroup() {
	exp := &results.Export{Groups: []results.Group{
		{Name: "naive", Counters: map[string]int64{"misattributed_errors": 12}},
		{Name: "probe", Counters: map[string]int64{"misattributed_errors": 0}},
	}}
	naive, err := exp.LookupGroup("naive")
	fmt.Println(naive.Counter(metrics.MisattributedErrors), err)
	_, err = exp.LookupGroup("prob")
	fmt.Println(err)
	fmt.Println(exp.Group("prob").Counter(metrics.MisattributedErrors))
	// Output:
	// 12 <nil>
	// the export has no group "prob"; did you mean "probe"? use one of naive, probe, overall
	// 0
}
