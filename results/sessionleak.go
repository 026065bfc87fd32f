package results

// SessionLeak is the session-leak check of a churn workload against the reference server
// (engine/leakcheck.go; docs/session-leaks.md): once the session TTL had passed since the
// clients last churned, did the sessions the server holds come back to those the clients
// hold? A judged check that failed fails the gate like a threshold (exit 99).
type SessionLeak struct {
	Judged     bool    `json:"judged"`  // false: the run could not judge it (Verdict says why)
	Pass       bool    `json:"pass"`    // the server's sessions held came back to the clients'
	Held       int64   `json:"held"`    // the server's sessions held at the verdict
	Live       int64   `json:"live"`    // the sessions the clients held then
	AtSeconds  float64 `json:"at_s"`    // when, from the start
	TTLSeconds float64 `json:"ttl_s"`   // the server's session TTL
	Opened     int64   `json:"opened"`  // the server's sessions opened by then
	Deleted    int64   `json:"deleted"` // of them, ended by DELETE
	Expired    int64   `json:"expired"` // of them, ended by the TTL
	Refused    int64   `json:"refused"` // initializes the server refused at max_sessions
	Verdict    string  `json:"verdict"` // in words: passed, LEAK, or not judged and why
}

// Failed says whether the check was judged and failed: the gate fails.
func (s *SessionLeak) Failed() bool { return s != nil && s.Judged && !s.Pass }
