package config

import "testing"

// TestValidateACME: serve.tls.acme's domains, contact, directory and
// renewal, and how it sits with tls.listen and the certificate files.
func TestValidateACME(t *testing.T) {
	t.Parallel()
	on := func(c *Config) {
		c.Serve.TLS.Listen = ":443"
		c.Serve.TLS.ACME.Domains = []string{"tickets.example.com", "www.example.com"}
		c.Serve.TLS.ACME.Email = "ops@example.com"
	}
	tests := []struct {
		name   string
		change func(c *Config)
		want   []string
	}{
		{"valid", on, nil},
		{"valid, test CA on loopback", func(c *Config) {
			on(c)
			c.Serve.TLS.ACME.DirectoryURL = "http://127.0.0.1:14000/dir"
			c.Serve.TLS.ACME.CAFile = "/etc/waitroom/ca.pem"
		}, nil},
		{"no tls listener", func(c *Config) { on(c); c.Serve.TLS.Listen = "" }, []string{
			"serve.tls.listen: is empty while acme.domains is set: ACME certificates are served on tls.listen (such as :443)"}},
		{"with certificate files", func(c *Config) { on(c); c.Serve.TLS.CertFile = "c.pem"; c.Serve.TLS.KeyFile = "k.pem" }, []string{
			"serve.tls.acme.domains: is set together with cert_file or key_file: use certificate files or ACME, not both"}},
		{"contact without domains", func(c *Config) { c.Serve.TLS.ACME.Email = "ops@example.com" }, []string{
			"serve.tls.acme.domains: is empty while email or ca_file is set: list the domains to obtain certificates for, or remove them"}},
		{"bad domains", func(c *Config) {
			on(c)
			c.Serve.TLS.ACME.Domains = []string{"*.example.com", "Tickets.example.com", "localhost", "192.0.2.7", "a..b", "x.example.com.", "ok.example.com", "ok.example.com", "bücher.example"}
		}, []string{
			`serve.tls.acme.domains[0]: "*.example.com" is a wildcard: HTTP-01 and TLS-ALPN-01 cannot prove one, list each name`,
			`serve.tls.acme.domains[1]: must be a DNS name with a dot and lower-case letters, digits and hyphens, such as tickets.example.com (got "Tickets.example.com")`,
			`serve.tls.acme.domains[2]: must be a DNS name with a dot and lower-case letters, digits and hyphens, such as tickets.example.com (got "localhost")`,
			`serve.tls.acme.domains[3]: must be a DNS name with a dot and lower-case letters, digits and hyphens, such as tickets.example.com (got "192.0.2.7")`,
			`serve.tls.acme.domains[4]: must be a DNS name with a dot and lower-case letters, digits and hyphens, such as tickets.example.com (got "a..b")`,
			`serve.tls.acme.domains[5]: must be a DNS name with a dot and lower-case letters, digits and hyphens, such as tickets.example.com (got "x.example.com.")`,
			`serve.tls.acme.domains[7]: "ok.example.com" is listed already at domains[6]`,
			`serve.tls.acme.domains[8]: must be a DNS name with a dot and lower-case letters, digits and hyphens, such as tickets.example.com (got "bücher.example")`}},
		{"bad email", func(c *Config) { on(c); c.Serve.TLS.ACME.Email = "Ops <ops@example.com>" }, []string{
			`serve.tls.acme.email: must be a bare e-mail address such as ops@example.com (got "Ops <ops@example.com>")`}},
		{"plain http directory", func(c *Config) { on(c); c.Serve.TLS.ACME.DirectoryURL = "http://acme.example.com/dir" }, []string{
			"serve.tls.acme.directory_url: is plain http to acme.example.com: the CA's directory must be https (http only on a loopback address, for a test CA)"}},
		{"empty directory", func(c *Config) { on(c); c.Serve.TLS.ACME.DirectoryURL = "" }, []string{
			"serve.tls.acme.directory_url: is empty: must be the https URL of an ACME directory, such as https://acme-v02.api.letsencrypt.org/directory"}},
		{"directory with credentials", func(c *Config) { on(c); c.Serve.TLS.ACME.DirectoryURL = "https://u:p@acme.example.com/dir" }, []string{
			`serve.tls.acme.directory_url: must be the https URL of an ACME directory, such as https://acme-v02.api.letsencrypt.org/directory (got "https://u:p@acme.example.com/dir")`}},
		{"ftp directory", func(c *Config) { on(c); c.Serve.TLS.ACME.DirectoryURL = "ftp://acme.example.com/dir" }, []string{
			`serve.tls.acme.directory_url: must be the https URL of an ACME directory, such as https://acme-v02.api.letsencrypt.org/directory (got "ftp://acme.example.com/dir")`}},
		{"renew before", func(c *Config) { on(c); c.Serve.TLS.ACME.RenewBefore = Duration(90 * 24 * 3600e9) }, []string{
			"serve.tls.acme.renew_before: must be from 1h to 720h (got 2160h)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validProxy()
			tt.change(c)
			wantProblems(t, ValidateFor(c, RoleProxy), tt.want...)
		})
	}
}
