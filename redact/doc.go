// Package redact keeps secrets out of everything mcpchaos writes. A Set holds a run's secrets
// (the values of a target's extra headers, the user-info and query of its URL, the environment
// of a deploy command) and cuts each of them out of a text in every form a server or a library
// may have given it: literal, JSON-escaped (`\/`, `\"`, `\uXXXX`), quoted (`\xXX`, `\'`),
// percent-encoded (either hex case, `+` for a space), HTML-escaped, and base64 or base64url
// (padded or not, at each of the three alignments a secret can have inside a longer base64
// text). URL is the one way a URL is shown: user-info, query and fragment replaced by
// "[redacted]"; ParseURL parses a URL without ever echoing its credentials in an error.
//
// Two layers of encoding are matched in the same pass, no more (nested.go): an escape whose
// bytes were escaped again ("%252F", "\u00252F", "\\/") and base64 of the secret
// percent-encoded or JSON-escaped.
//
// Where it is applied: package wire cuts the secrets out of every response body as it is read
// (Reader); Set.Out is the one exit where text leaves for an output, called by wire for every
// error it returns, by engine.Run for its export and error, and by inspect.Inspect for its
// fingerprint and error: whatever text a server sent is caught after decoding there, whichever
// path it took. This package must not know what a run or a fingerprint is: it redacts strings, bytes,
// errors and any Go value made of them.
package redact
