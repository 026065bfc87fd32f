package redact

import (
	"errors"
	"net/url"
	"strings"
)

// URL is the one way a URL is shown: scheme, host and path, with its user-info, query and
// fragment (which may carry credentials) each replaced by Mark.
func URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	user := c.User != nil
	query := c.RawQuery != "" || c.ForceQuery
	frag := c.Fragment != ""
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	s := c.String()
	if user {
		if i := strings.Index(s, "://"); i >= 0 {
			s = s[:i+3] + Mark + "@" + s[i+3:]
		}
	}
	if query {
		s += "?" + Mark
	}
	if frag {
		s += "#" + Mark
	}
	return s
}

// URLString is raw shown as URL shows it; text that does not parse as a URL loses its
// user-info, query and fragment all the same.
func URLString(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return URL(u)
	}
	s := raw
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		if s[i] == '?' {
			s = s[:i] + "?" + Mark
		} else {
			s = s[:i] + "#" + Mark
		}
	}
	if scheme, at := strings.Index(s, "://"), strings.LastIndex(s, "@"); at >= 0 {
		if scheme >= 0 && at > scheme {
			return s[:scheme+3] + Mark + "@" + s[at+1:]
		}
		if scheme < 0 {
			return Mark + "@" + s[at+1:]
		}
	}
	return s
}

// ParseURL is url.Parse whose error never carries the URL's credentials: the error quotes
// the URL as URLString shows it, and says why it does not parse from the URL with its
// user-info cut out (a password holding a '/' makes url.Parse read the rest as a port, and
// quote it).
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err == nil {
		return u, nil
	}
	why := errors.New("its user-info (credentials, not shown) does not parse")
	if _, err2 := url.Parse(withoutUserInfo(raw)); err2 != nil {
		why = err2
		var ue *url.Error
		if errors.As(err2, &ue) {
			why = ue.Err
		}
	}
	return nil, &url.Error{Op: "parse", URL: URLString(raw), Err: why}
}

// withoutUserInfo is raw with everything from the scheme to its last '@' cut out: where a
// credential ends cannot be known in a URL that does not parse, so all that could be one goes.
func withoutUserInfo(raw string) string {
	at := strings.LastIndex(raw, "@")
	if at < 0 {
		return raw
	}
	if i := strings.Index(raw, "://"); i >= 0 && i < at {
		return raw[:i+3] + raw[at+1:]
	}
	return raw[at+1:]
}

// redactURLsIn shows every absolute URL in text as URL does: a server's own credential in a
// redirect, a signed link in a tool's answer.
func redactURLsIn(text string) string {
	if !strings.Contains(text, "://") {
		return text
	}
	var b strings.Builder
	last := 0
	for i := 0; ; {
		j := strings.Index(text[i:], "://")
		if j < 0 {
			break
		}
		j += i
		start := j
		for start > last && isSchemeByte(text[start-1]) {
			start--
		}
		end := j + 3
		for end < len(text) && !strings.ContainsRune(" \t\r\n\"'<>`\\", rune(text[end])) {
			end++
		}
		tok := text[start:end]
		if start < j && strings.ContainsAny(tok[j-start+3:], "@?#") {
			b.WriteString(text[last:start])
			b.WriteString(URLString(tok))
			last = end
		}
		i = end
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}
