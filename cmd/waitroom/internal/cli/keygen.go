package cli

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"os"
)

func init() {
	register(command{
		name:    "keygen",
		summary: "make an Ed25519 key pair (or an HS256 secret) for signing tickets and passes",
		run:     runKeygen,
	})
}

const keygenHelp = `Usage: waitroom keygen [-out PREFIX] | -secret

Makes the key that signs tickets and passes.

By default, an Ed25519 key pair for algorithm EdDSA: PREFIX.key, the
private key (PEM, PKCS#8 "PRIVATE KEY", readable by its owner only), for
serve.keys.signing.private_key_file on every replica; and PREFIX.pub, the
public key (PEM, PKIX "PUBLIC KEY"), for public_key_file of a verify key
and for origins that check passes themselves (they can also read
/_wr/jwks.json). Existing files are never overwritten.

With -secret, it prints a random 32-byte secret in hex for algorithm HS256
instead (serve.keys.signing.secret via ${WAITROOM_SIGNING_SECRET}, or
secret_file), the same on every replica.
`

func runKeygen(_ context.Context, args []string, s stdio) int {
	fs := newFlags("keygen", keygenHelp)
	out := fs.String("out", "waitroom-signing", "write the key pair to `PREFIX`.key and PREFIX.pub")
	secret := fs.Bool("secret", false, "print an HS256 secret instead of writing a key pair")
	if code, done := parseFlags(fs, args, s); done {
		return code
	}
	if code, done := noArgs(fs, s); done {
		return code
	}
	if *secret {
		if flagSet(fs, "out") {
			return badUsage(fs, s, "-secret prints a secret and writes no files: drop -out")
		}
		b := make([]byte, 32)
		rand.Read(b)
		fmt.Fprintln(s.stdout, hex.EncodeToString(b))
		return exitOK
	}
	if *out == "" {
		return badUsage(fs, s, "-out needs a file name prefix")
	}
	priv, pub := *out+".key", *out+".pub"
	if err := writeKeyPair(priv, pub); err != nil {
		fmt.Fprintf(s.stderr, "waitroom keygen: %v\n", err)
		return exitError
	}
	fmt.Fprintf(s.stdout, "wrote %s (private: keep it secret, same on every replica) and %s (public)\n", priv, pub)
	return exitOK
}

// writeKeyPair writes a new Ed25519 key pair as PEM files, creating both
// (never replacing one); on failure neither is left behind.
func writeKeyPair(privPath, pubPath string) error {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return err
	}
	if err := createPEM(privPath, 0o600, "PRIVATE KEY", privDER); err != nil {
		return err
	}
	if err := createPEM(pubPath, 0o644, "PUBLIC KEY", pubDER); err != nil {
		os.Remove(privPath)
		return err
	}
	return nil
}

// createPEM creates path (failing if it exists) holding one PEM block,
// synced to disk.
func createPEM(path string, mode os.FileMode, typ string, der []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s exists; keygen never overwrites a key (choose another -out)", path)
		}
		return err
	}
	err = pem.Encode(f, &pem.Block{Type: typ, Bytes: der})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// flagSet reports whether the command line set the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
