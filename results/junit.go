package results

import (
	"encoding/xml"
	"io"
)

// JUnit XML, in the layout CI systems read (Jenkins, GitLab, GitHub test reporters): a run's
// thresholds (WriteJUnit) and compare's verdict (results/compare) are written by WriteJUnitSuite.
type (
	JUnitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Suites   []JUnitSuite `xml:"testsuite"`
	}
	JUnitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr,omitempty"`
		Time       string          `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr"`
		Properties []JUnitProperty `xml:"properties>property"`
		Cases      []JUnitCase     `xml:"testcase"`
	}
	JUnitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	JUnitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *JUnitFailure `xml:"failure,omitempty"`
		Skipped   *JUnitSkipped `xml:"skipped,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	JUnitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	JUnitSkipped struct {
		Message string `xml:"message,attr"`
	}
)

// WriteJUnitSuite writes s, its counts tallied from its cases, as the one suite of a
// document named name.
func WriteJUnitSuite(w io.Writer, name string, s JUnitSuite) error {
	s.Tests, s.Failures, s.Skipped = 0, 0, 0
	for _, c := range s.Cases {
		s.Tests++
		if c.Failure != nil {
			s.Failures++
		}
		if c.Skipped != nil {
			s.Skipped++
		}
	}
	doc := JUnitSuites{Name: name, Tests: s.Tests, Failures: s.Failures, Suites: []JUnitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
