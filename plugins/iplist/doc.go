// Package iplist loads the IP ranges that cloud and hosting providers
// publish — AWS ip-ranges.json, Google Cloud cloud.json and goog.json,
// Azure Service Tags, Oracle Cloud public_ip_ranges.json, RFC 8805
// geofeeds (DigitalOcean and others) and plain CIDR lists — into an
// immutable Set that answers whether an address is in any of them, fast
// and without allocating. Signal turns a Set into a risk signal: a
// visitor joining from a datacenter address is likely a script.
//
// It parses files it is given; it does not download them (fetch the
// providers' files with a scheduled job and reload), and it does not
// judge anything but membership: the weight of a hit is the scorer's
// business (package challenge).
package iplist
