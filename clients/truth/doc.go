// Package truth tells when a session died, as far as the run can know: exactly when the
// server records its deaths (the reference server, through Func), or estimated from the
// client's own traffic and a declared TTL or regime (Estimated, a Learner).
//
// It must not send requests or count a run's metrics: it is told what the clients saw, keyed
// by session id, and answers DeadSince; the fleet counts what its answers mean.
package truth
