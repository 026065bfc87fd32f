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

// URLString is raw shown as URL shows it. Where a URL's user-info ends cannot always be known:
// a password holding an unescaped '#', '?' or '/' ends the authority early for url.Parse
// ("http://usr:pa#ss@host/" is host "usr", port "pa", fragment "ss@host/"), and the text
// before that character would be shown as a host. So when the parse finds no user-info but
// an '@' follows the scheme, everything from the scheme to the last '@' is user-info and
// goes; text that does not parse as a URL is cut the same way.
func URLString(raw string) string {
	u, err := url.Parse(raw)
	scheme, at := strings.Index(raw, "://"), strings.LastIndex(raw, "@")
	if err == nil && !HiddenUserInfo(raw) {
		return URL(u)
	}
	s := raw
	if at >= 0 && at > scheme {
		prefix := ""
		if scheme >= 0 {
			prefix = raw[:scheme+3]
		}
		s = prefix + Mark + "@" + raw[at+1:]
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		return s[:i+1] + Mark
	}
	return s
}

// HiddenUserInfo says whether raw has an '@' after its authority (or, with no scheme, any):
// a password holding an unescaped '#', '?' or '/' (which end the authority for url.Parse), or
// an '@' in the path, query or fragment. URLString shows everything before it as
// credentials; a caller that must use the URL refuses it (workloads.CheckURL), since what it
// would dial may not be what was meant.
func HiddenUserInfo(raw string) bool {
	at := strings.LastIndex(raw, "@")
	if at < 0 {
		return false
	}
	scheme := strings.Index(raw, "://")
	if scheme < 0 {
		return true
	}
	authority := raw[scheme+3:]
	if end := strings.IndexAny(authority, "/?#"); end >= 0 {
		authority = authority[:end]
	}
	return at >= scheme+3+len(authority)
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
		// A user-info may hold a quote ('), so a URL quoted in one keeps the closing quote.
		for end < len(text) && !strings.ContainsRune(" \t\r\n\"<>`\\", rune(text[end])) {
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
