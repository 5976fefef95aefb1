package config

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/secretcheck"
)

// This file turns validated settings into the values the admission engine
// takes, reading the files they name. Validate never calls it: it is what
// start-up does after validation.

// Errors of the start-up helpers, for errors.Is.
var (
	// ErrSchedule: an event's times, once resolved, are out of order.
	ErrSchedule = errors.New("config: event schedule out of order")
	// ErrKeyMaterial: a secret or key file cannot be used.
	ErrKeyMaterial = errors.New("config: unusable key material")
)

// KeyError is a key whose material cannot be used, found at start-up by
// Load or Keyring: which setting, which file, and why. Its text is one
// line, "serve.keys.signing.secret_file /run/k: no such file or
// directory", and never contains secret bytes. It wraps ErrKeyMaterial or
// the file system's error.
type KeyError struct {
	// Path is the setting: the key's field ("secret_file") from Load,
	// with the key's path in front ("serve.keys.verify[1].secret_file")
	// from Keyring.
	Path string
	// File is the file the setting names; empty for an inline secret.
	File string
	// Msg says what is wrong and, where it helps, what to do.
	Msg string
	// Err is ErrKeyMaterial or the file system's error.
	Err error
}

// Error returns "path file: msg".
func (e *KeyError) Error() string {
	s := e.Path
	if e.File != "" {
		s += " " + e.File
	}
	return s + ": " + e.Msg
}

// Unwrap returns ErrKeyMaterial or the file system's error.
func (e *KeyError) Unwrap() error { return e.Err }

// Load returns the key as an admission.Key, reading secret_file,
// private_key_file or public_key_file. A secret file's one trailing
// newline ("\n" or "\r\n") is ignored; its contents must still be at least
// MinSecretLength bytes and not obviously guessable (secretcheck.Weak).
// Key files are PEM: PKCS#8 "PRIVATE KEY" or PKIX "PUBLIC KEY" holding
// Ed25519 keys. Errors are *KeyError values naming the key's field; they
// wrap ErrKeyMaterial (or the file system's error) and never contain
// secret bytes.
func (k Key) Load() (admission.Key, error) {
	out := admission.Key{ID: k.ID, Alg: string(k.Algorithm)}
	fail := func(field, file string, format string, args ...any) (admission.Key, error) {
		return admission.Key{}, &KeyError{Path: field, File: file, Msg: fmt.Sprintf("key %q: "+format, append([]any{k.ID}, args...)...), Err: ErrKeyMaterial}
	}
	readFail := func(field, file string, err error) (admission.Key, error) {
		var pe *fs.PathError
		msg := err.Error()
		if errors.As(err, &pe) {
			msg = pe.Err.Error() // the path is in File already
		}
		return admission.Key{}, &KeyError{Path: field, File: file, Msg: fmt.Sprintf("key %q: cannot read it: %s", k.ID, msg), Err: err}
	}
	switch k.Algorithm {
	case AlgHS256:
		secret, field := []byte(k.Secret), "secret"
		if k.SecretFile != "" {
			field = "secret_file"
			data, err := os.ReadFile(k.SecretFile)
			if err != nil {
				return readFail(field, k.SecretFile, err)
			}
			secret = trimNewline(data)
		}
		if len(secret) < MinSecretLength {
			return fail(field, k.SecretFile, "the HS256 secret is %d bytes, want at least %d; %s", len(secret), MinSecretLength, secretcheck.Hint)
		}
		if why := secretcheck.Weak(string(secret), MinSecretLength); why != "" {
			return fail(field, k.SecretFile, "the HS256 secret %s; %s", why, secretcheck.Hint)
		}
		out.Secret = secret
	case AlgEdDSA:
		switch {
		case k.PrivateKeyFile != "":
			priv, err := readEd25519Private(k.PrivateKeyFile)
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				return readFail("private_key_file", k.PrivateKeyFile, err)
			}
			if err != nil {
				return fail("private_key_file", k.PrivateKeyFile, "%v (waitroom keygen writes a usable one)", err)
			}
			out.Private = priv
		case k.PublicKeyFile != "":
			pub, err := readEd25519Public(k.PublicKeyFile)
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				return readFail("public_key_file", k.PublicKeyFile, err)
			}
			if err != nil {
				return fail("public_key_file", k.PublicKeyFile, "%v (waitroom keygen writes a usable one)", err)
			}
			out.Public = pub
		default:
			return fail("private_key_file", "", "no private_key_file or public_key_file")
		}
	default:
		return fail("algorithm", "", "unsupported algorithm %q", k.Algorithm)
	}
	return out, nil
}

// verifyOnly returns key without its private half: a verification key
// given as a private key file must not be able to sign.
func verifyOnly(key admission.Key) admission.Key {
	if key.Private != nil {
		key.Public = key.Private.Public().(ed25519.PublicKey)
		key.Private = nil
	}
	return key
}

// Keyring loads the signing key and every verification key and returns
// the keyring that signs and verifies tickets and passes. A verification
// key given as a private key file only verifies.
func (k Keys) Keyring() (*admission.Keyring, error) {
	signing, err := k.Signing.Load()
	if err != nil {
		return nil, keyAt("serve.keys.signing", err)
	}
	verify := make([]admission.Key, 0, len(k.Verify))
	var errs []error
	for i, vk := range k.Verify {
		key, err := vk.Load()
		if err != nil {
			errs = append(errs, keyAt(fmt.Sprintf("serve.keys.verify[%d]", i), err))
			continue
		}
		verify = append(verify, verifyOnly(key))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	kr, err := admission.NewKeyring(signing, verify...)
	if err != nil {
		return nil, fmt.Errorf("serve.keys: %w", err)
	}
	return kr, nil
}

// keyAt puts the key's path in front of the field a *KeyError names.
func keyAt(path string, err error) error {
	var ke *KeyError
	if errors.As(err, &ke) {
		c := *ke
		c.Path = path + "." + c.Path
		return &c
	}
	return fmt.Errorf("%s: %w", path, err)
}

func trimNewline(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// pemBlock reads the one PEM block of type typ in file.
func pemBlock(file, typ string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	switch {
	case block == nil:
		return nil, errors.New("no PEM block")
	case block.Type != typ:
		return nil, fmt.Errorf("a PEM %q block, want %q", block.Type, typ)
	}
	return block.Bytes, nil
}

func readEd25519Private(file string) (ed25519.PrivateKey, error) {
	der, err := pemBlock(file, "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, errors.New("not a PKCS#8 private key")
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("a %T, want an Ed25519 key", key)
	}
	return priv, nil
}

func readEd25519Public(file string) (ed25519.PublicKey, error) {
	der, err := pemBlock(file, "PUBLIC KEY")
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, errors.New("not a PKIX public key")
	}
	pub, ok := key.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("a %T, want an Ed25519 key", key)
	}
	return pub, nil
}

// LoadAllowlist reads an allowlist file: one account id per line, blank
// lines and lines starting with # skipped.
func LoadAllowlist(path string) (*admission.Allowlist, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: allowlist: %w", err)
	}
	defer f.Close()
	a, err := admission.LoadAllowlist(f)
	if err != nil {
		return nil, fmt.Errorf("config: allowlist %s: %w", path, err)
	}
	return a, nil
}

// Load returns the lane as an admission.LaneConfig, reading its allowlist
// file.
func (l Lane) Load() (admission.LaneConfig, error) {
	out := admission.LaneConfig{Name: l.Name, Priority: l.Priority, Share: l.Share}
	if l.InviteSecret != "" {
		out.Access.InviteSecret = []byte(l.InviteSecret)
	}
	if l.AccountSecret != "" {
		out.Access.AccountSecret = []byte(l.AccountSecret)
	}
	if l.AllowlistFile != "" {
		a, err := LoadAllowlist(l.AllowlistFile)
		if err != nil {
			return admission.LaneConfig{}, fmt.Errorf("config: lane %q: %w", l.Name, err)
		}
		out.Access.Allowlist = a
	}
	return out, nil
}

// Schedule resolves the event's times for a process that started at
// start (see Instant.Resolve) and checks their order, which Validate can
// check only between times of the same kind: queue_opens_at <= on_sale_at
// < closes_at. An unset queue_opens_at is on_sale_at; an unset closes_at
// stays zero (never); an unset on_sale_at (mode always or threshold,
// without queue_opens_at) stays zero: open from the start. Errors wrap
// ErrSchedule.
func (e *Event) Schedule(start time.Time) (opens, onSale, closes time.Time, err error) {
	onSale = e.OnSaleAt.Resolve(start)
	opens = e.QueueOpensAt.Resolve(start)
	if opens.IsZero() {
		opens = onSale
	}
	closes = e.ClosesAt.Resolve(start)
	switch {
	case onSale.IsZero() && (e.Mode == ModeScheduled || !opens.IsZero()):
		err = fmt.Errorf("%w: event %q has no on_sale_at", ErrSchedule, e.ID)
	case onSale.IsZero():
		// Open from the start (always, threshold): the engine anchors it.
	case opens.After(onSale):
		err = fmt.Errorf("%w: event %q: queue_opens_at %s is after on_sale_at %s", ErrSchedule, e.ID, stamp(opens), stamp(onSale))
	case !closes.IsZero() && !closes.After(onSale):
		err = fmt.Errorf("%w: event %q: closes_at %s is not after on_sale_at %s", ErrSchedule, e.ID, stamp(closes), stamp(onSale))
	}
	return opens, onSale, closes, err
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// AdmissionConfig returns the event as the admission engine's
// EventConfig, for a process that started at start: times resolved and
// ordered (Schedule), lanes loaded (their allowlist files read).
func (e *Event) AdmissionConfig(start time.Time) (admission.EventConfig, error) {
	opens, onSale, closes, err := e.Schedule(start)
	if err != nil {
		return admission.EventConfig{}, err
	}
	out := admission.EventConfig{
		ID:              e.ID,
		Mode:            admission.Mode(e.Mode),
		QueueOpensAt:    opens,
		OnSaleAt:        onSale,
		ClosesAt:        closes,
		Tranche:         e.Tranche.Std(),
		SessionDuration: e.SessionDuration.Std(),
		MaxSession:      e.MaxSession.Std(),
		NoShowGrace:     e.NoShowGrace.Std(),
		CompleteGrace:   e.CompleteGrace.Std(),
		Caps:            admission.Caps{MaxActive: e.Caps.MaxActive, MaxNewPerMinute: e.Caps.MaxNewPerMinute},
		VisitorsPerSeat: e.VisitorsPerSeat,
		InventoryEvent:  e.InventoryEvent,
		Controller: admission.ControllerConfig{
			Tick:            e.Controller.Tick.Std(),
			TargetP95:       e.Controller.TargetP95.Std(),
			TargetErrorRate: e.Controller.TargetErrorRate,
			InitialActive:   e.Controller.InitialActive,
			MinActive:       e.Controller.MinActive,
			Increase:        e.Controller.Increase,
			Decrease:        e.Controller.Decrease,
			ExpectedRate:    e.Controller.ExpectedRate,
		},
	}
	for _, l := range e.Lanes {
		lc, err := l.Load()
		if err != nil {
			return admission.EventConfig{}, fmt.Errorf("config: event %q: %w", e.ID, err)
		}
		out.Lanes = append(out.Lanes, lc)
	}
	return out, nil
}

// ParseNetwork reads a CIDR ("10.0.0.0/8", "2001:db8::/32") or a bare IP
// address, which is its own /32 or /128 network. IPv4-mapped IPv6
// addresses are taken as IPv4. The result is not masked: Validate rejects
// a CIDR with bits set after its length.
func ParseNetwork(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("config: %q is not a CIDR", s)
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		return p, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("config: %q is not an IP address", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// ParseNetworks reads a list of networks (serve.trusted_proxies,
// serve.bypass.cidrs) with ParseNetwork, masked.
func ParseNetworks(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		p, err := ParseNetwork(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
