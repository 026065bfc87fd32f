package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"strconv"
	"strings"
)

// Encodings are spellings of secret that a text must not hold once redacted (a Set cuts these
// and more): what a server, a library or one of our outputs may have made of it. Tests search
// outputs for each.
func Encodings(secret string) map[string]string {
	out := map[string]string{"literal": secret}
	j, _ := json.Marshal(secret)
	out["json"] = string(j[1 : len(j)-1])
	out["json, / escaped (PHP)"] = strings.ReplaceAll(out["json"], "/", `\/`)
	out["json, all \\u"] = uEscape(secret)
	q := strconv.Quote(secret)
	out["quoted"] = q[1 : len(q)-1]
	out["percent, upper"] = pctAll(secret, "%%%02X")
	out["percent, lower"] = pctAll(secret, "%%%02x")
	out["query escape"] = url.QueryEscape(secret)
	out["path escape"] = url.PathEscape(secret)
	out["html"] = html.EscapeString(secret)
	for name, enc := range map[string]*base64.Encoding{"base64": base64.StdEncoding, "base64url": base64.URLEncoding,
		"base64 raw": base64.RawStdEncoding, "base64url raw": base64.RawURLEncoding} {
		out[name] = enc.EncodeToString([]byte(secret))
	}
	// Two layers (nested.go).
	pct := out["percent, upper"]
	out["percent of percent"] = strings.ReplaceAll(pct, "%", "%25")
	out["json \\u of percent"] = strings.ReplaceAll(pct, "%", `\u0025`)
	out["json of PHP json"] = strings.ReplaceAll(out["json, / escaped (PHP)"], `\`, `\\`)
	out["base64 of percent"] = base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(secret)))
	out["base64url of json"] = base64.URLEncoding.EncodeToString([]byte(out["json"]))
	return out
}

func pctAll(s, format string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, format, s[i])
	}
	return b.String()
}

func uEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0xFFFF {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}
