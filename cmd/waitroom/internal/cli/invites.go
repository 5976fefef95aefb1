package cli

import (
	"context"
	"crypto/rand"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/fsutil"
)

func init() {
	register(command{
		name:    "invites",
		summary: "mint presale invite codes (mint) and check codes a visitor reports (check)",
		run:     runInvites,
	})
}

// MaxMint bounds one run of invites mint.
const MaxMint = 1_000_000

const invitesHelp = `Usage: waitroom invites mint -c FILE --event E --lane L -n COUNT [-o FILE] [--force] [--batch NAME]
       waitroom invites check -c FILE --event E CODE...

Invite codes admit to a presale lane (events[].lanes[] with an
invite_secret): each code gives one visitor a place in its lane, once.
On the waiting-room page a visitor types or pastes the code (upper or
lower case, with or without spaces and dashes) into the invite field; a
link to the event's page ending in #invite=CODE fills it in.

mint writes COUNT new codes as CSV (to -o FILE, or standard output), one
per line after a header:

  code,event,lane,id,batch,link_path

code is what the visitor enters (XXXX-XXXX-XXXX-XXXX-XXXX-XXXX), id what
waitroom records when it is redeemed, batch the label of this run, and
link_path the event's landing path with #invite=CODE (put your site's
address in front of it for a link in an e-mail). Codes are signed with the
lane's invite_secret: nothing needs storing before they are used, every
replica accepts them, and the store (Redis for several replicas) records
each redemption so that a code admits once across all of them. Changing
the lane's invite_secret revokes every code minted with the old one.
An existing output file is never replaced unless --force is given; a new
one is readable by its owner only (anyone holding a code can use it).

check tells, for each CODE, whether it is valid for the event and for
which lane (it does not tell whether it was used); it exits 1 when one is
not valid.
`

func runInvites(ctx context.Context, args []string, s stdio) int {
	if len(args) == 0 {
		io.WriteString(s.stderr, invitesHelp)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		io.WriteString(s.stdout, invitesHelp)
		return exitOK
	case "mint":
		return runMint(ctx, args[1:], s)
	case "check":
		return runInviteCheck(ctx, args[1:], s)
	}
	fmt.Fprintf(s.stderr, "waitroom invites: unknown subcommand %q\n\n%s", args[0], invitesHelp)
	return exitUsage
}

// inviteLane loads the configuration and returns the event and, when
// lane is not empty, the lane with its invite secret.
func inviteLane(path, eventID, lane string) (*config.Event, *config.Lane, error) {
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, nil, err
	}
	for i := range cfg.Events {
		e := &cfg.Events[i]
		if e.ID != eventID {
			continue
		}
		if lane == "" {
			return e, nil, nil
		}
		for j := range e.Lanes {
			l := &e.Lanes[j]
			if l.Name != lane {
				continue
			}
			if l.InviteSecret == "" {
				return nil, nil, fmt.Errorf("events[%d].lanes[%d] (%s) has no invite_secret: it takes no invite codes", i, j, lane)
			}
			return e, l, nil
		}
		return nil, nil, fmt.Errorf("event %q has no lane %q (its lanes: %s)", eventID, lane, laneNames(e))
	}
	return nil, nil, fmt.Errorf("%s has no event %q", path, eventID)
}

func laneNames(e *config.Event) string {
	s := ""
	for _, l := range e.Lanes {
		if s != "" {
			s += ", "
		}
		s += l.Name
	}
	if s == "" {
		return "none but the public lane"
	}
	return s
}

func runMint(_ context.Context, args []string, s stdio) int {
	fs := newFlags("invites mint", invitesHelp)
	path := fs.String("c", "", "the configuration `FILE` with the event and its lane")
	eventID := fs.String("event", "", "the event `ID`")
	lane := fs.String("lane", "", "the lane `NAME` (it must have an invite_secret)")
	n := fs.Int("n", 0, "how many codes to mint (1 to "+strconv.Itoa(MaxMint)+")")
	out := fs.String("o", "", "write the CSV to `FILE` (default: standard output)")
	force := fs.Bool("force", false, "replace -o FILE if it exists")
	batch := fs.String("batch", "", "a label for this run, in every row (default: the time, mint-YYYYMMDDTHHMMSSZ)")
	if code, done := parseFlags(fs, args, s); done {
		return code
	}
	if code, done := noArgs(fs, s); done {
		return code
	}
	switch {
	case *path == "":
		return badUsage(fs, s, "missing -c FILE")
	case *eventID == "":
		return badUsage(fs, s, "missing --event ID")
	case *lane == "":
		return badUsage(fs, s, "missing --lane NAME")
	case *n < 1 || *n > MaxMint:
		return badUsage(fs, s, "-n must be from 1 to %d", MaxMint)
	case *force && *out == "":
		return badUsage(fs, s, "--force replaces -o FILE: give one")
	}
	if *batch == "" {
		*batch = "mint-" + time.Now().UTC().Format("20060102T150405Z")
	}
	ev, l, err := inviteLane(*path, *eventID, *lane)
	if err != nil {
		printProblems(s, err)
		return exitError
	}
	write := func(w io.Writer) error {
		return mintCSV(w, []byte(l.InviteSecret), ev, l.Name, *batch, *n)
	}
	if *out == "" {
		err = write(s.stdout)
	} else {
		err = writeNewFile(*out, *force, write)
	}
	if err != nil {
		fmt.Fprintf(s.stderr, "waitroom invites mint: %v\n", err)
		return exitError
	}
	if *out != "" {
		fmt.Fprintf(s.stdout, "minted %d invite codes for lane %s of event %s (batch %s) into %s\n", *n, l.Name, ev.ID, *batch, *out)
	}
	return exitOK
}

// mintCSV writes n fresh codes of one lane as CSV, no id twice.
func mintCSV(w io.Writer, secret []byte, ev *config.Event, lane, batch string, n int) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"code", "event", "lane", "id", "batch", "link_path"})
	landing := ev.LandingPath
	if landing == "" {
		landing = "/"
	}
	seen := make(map[[admission.ShortInviteIDLen]byte]struct{}, n)
	for len(seen) < n {
		var id [admission.ShortInviteIDLen]byte
		rand.Read(id[:])
		if _, dup := seen[id]; dup {
			continue
		}
		seen[id] = struct{}{}
		code := admission.MakeShortInvite(secret, ev.ID, id)
		cw.Write([]string{code, ev.ID, lane, admission.ShortInviteID(id), batch, landing + "#invite=" + code})
	}
	cw.Flush()
	return cw.Error()
}

// writeNewFile writes a file through write: created new (0600) and synced,
// or with replace, written beside it and renamed over it. A failed write
// leaves nothing behind.
func writeNewFile(path string, replace bool, write func(io.Writer) error) (err error) {
	target := path
	if replace {
		f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
		if err != nil {
			return err
		}
		path = f.Name()
		f.Close()
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if replace {
		flags = os.O_WRONLY | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s exists; it is not replaced without --force", target)
		}
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(path)
		}
	}()
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && replace {
		if err = os.Rename(path, target); err == nil {
			err = fsutil.SyncDir(filepath.Dir(target))
		}
	}
	return err
}

func runInviteCheck(_ context.Context, args []string, s stdio) int {
	fs := newFlags("invites check", invitesHelp)
	path := fs.String("c", "", "the configuration `FILE` with the event and its lanes")
	eventID := fs.String("event", "", "the event `ID`")
	if code, done := parseFlags(fs, args, s); done {
		return code
	}
	switch {
	case *path == "":
		return badUsage(fs, s, "missing -c FILE")
	case *eventID == "":
		return badUsage(fs, s, "missing --event ID")
	case fs.NArg() == 0:
		return badUsage(fs, s, "give the codes to check")
	}
	ev, _, err := inviteLane(*path, *eventID, "")
	if err != nil {
		printProblems(s, err)
		return exitError
	}
	status := exitOK
	for _, raw := range fs.Args() {
		lane, id := "", ""
		if inv, ok := admission.NormalizeInvite(raw); ok {
			for _, l := range ev.Lanes {
				if l.InviteSecret == "" {
					continue
				}
				if code, _, err := admission.ParseInvite([]byte(l.InviteSecret), ev.ID, inv); err == nil {
					lane, id = l.Name, code
					break
				}
			}
		}
		if lane == "" {
			fmt.Fprintf(s.stdout, "%q: not valid for event %s\n", raw, ev.ID)
			status = exitError
			continue
		}
		fmt.Fprintf(s.stdout, "%q: valid for lane %s of event %s (id %s)\n", raw, lane, ev.ID, id)
	}
	return status
}
