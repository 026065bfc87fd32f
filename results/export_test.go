package results

// What the external tests (package results_test, which can use resultstest) read of the
// package's insides.
type (
	JUnitSuites = junitSuites
	JUnitCase   = junitCase
)
