// Validation of serve.tls.acme: the domains, the contact, the CA's
// directory and how it sits with the certificate files.

package config

import (
	"fmt"
	"net/mail"
	"net/url"
	"strings"
)

func (v *validator) acme(path string, t *ServeTLS) {
	a := &t.ACME
	p := path + ".acme"
	if !a.Enabled() {
		if a.Email != "" || a.CAFile != "" {
			v.fail(p+".domains", "is empty while email or ca_file is set: list the domains to obtain certificates for, or remove them")
		}
		return
	}
	if t.Listen == "" {
		v.fail(path+".listen", "is empty while acme.domains is set: ACME certificates are served on tls.listen (such as :443)")
	}
	if t.CertFile != "" || t.KeyFile != "" {
		v.fail(p+".domains", "is set together with cert_file or key_file: use certificate files or ACME, not both")
	}
	seen := map[string]int{}
	for i, d := range a.Domains {
		dp := fmt.Sprintf("%s.domains[%d]", p, i)
		switch {
		case strings.HasPrefix(d, "*."):
			v.fail(dp, "%q is a wildcard: HTTP-01 and TLS-ALPN-01 cannot prove one, list each name", d)
		case !acmeDomain(d):
			v.fail(dp, "must be a DNS name with a dot and lower-case letters, digits and hyphens, such as tickets.example.com (got %q)", d)
		default:
			if j, dup := seen[d]; dup {
				v.fail(dp, "%q is listed already at domains[%d]", d, j)
			}
			seen[d] = i
		}
	}
	if a.Email != "" {
		if m, err := mail.ParseAddress(a.Email); err != nil || m.Address != a.Email || m.Name != "" {
			v.fail(p+".email", "must be a bare e-mail address such as ops@example.com (got %q)", a.Email)
		}
	}
	v.acmeDirectory(p+".directory_url", a.DirectoryURL)
	if r := a.RenewBefore.Std(); r < MinACMERenewBefore || r > MaxACMERenewBefore {
		v.fail(p+".renew_before", "must be from %s to %s (got %s)", Duration(MinACMERenewBefore), Duration(MaxACMERenewBefore), a.RenewBefore)
	}
}

// acmeDirectory checks a directory URL: https, or http to a loopback
// address (a test CA), a host, no credentials or fragment.
func (v *validator) acmeDirectory(path, raw string) {
	const want = "must be the https URL of an ACME directory, such as " + DefaultACMEDirectoryURL
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		v.fail(path, "is empty: %s", want)
	case err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || u.Opaque != "":
		// url.Parse's errors quote the whole URL: never show them.
		v.fail(path, "%s (got %q)", want, raw)
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
	case u.Scheme == "http":
		v.fail(path, "is plain http to %s: the CA's directory must be https (http only on a loopback address, for a test CA)", u.Hostname())
	default:
		v.fail(path, "%s (got %q)", want, raw)
	}
}

// acmeDomain reports whether d is a name a public CA can validate: ASCII
// lower case (IDNs in their xn-- form), at least two labels, not an IP
// address.
func acmeDomain(d string) bool {
	if d != strings.ToLower(d) || strings.HasSuffix(d, ".") || !strings.Contains(d, ".") || !validHost(d) {
		return false
	}
	last := d[strings.LastIndexByte(d, '.')+1:]
	return strings.Trim(last, "0123456789") != "" // an IPv4 address ends in digits
}
