package proxy

import (
	"errors"
	"net/http"
	"strings"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/jsonstrict"
)

// parseNotice reads the body of PUT /admin/v1/events/{id}/notice:
// {"text":"...","texts":{"de":"..."}}, strictly (no unknown or repeated
// fields, no trailing data). It checks the shape only; Notice.Check
// judges the texts.
func parseNotice(body []byte) (admission.Notice, error) {
	var n admission.Notice
	seenText := false
	err := jsonstrict.Decode(body, func(d *jsonstrict.Reader, name []byte) (err error) {
		switch string(name) {
		case "text":
			seenText = true
			n.Text, err = d.String("text")
			return err
		case "texts":
			if d.Null() {
				return nil
			}
			n.Texts = map[string]string{}
			return d.Object("texts", func(d *jsonstrict.Reader, tag []byte) (err error) {
				n.Texts[string(tag)], err = d.String("texts." + string(tag))
				return err
			})
		default:
			return jsonstrict.UnknownField("", name)
		}
	})
	if err == nil && !seenText {
		err = errors.New("proxy: a notice needs a text")
	}
	return n, err
}

// setNotice answers PUT /admin/v1/events/{id}/notice.
func (a *admin) setNotice(w http.ResponseWriter, r *http.Request) {
	body, ok := readAdminBody(w, r)
	if !ok {
		return
	}
	n, err := parseNotice(body)
	if err != nil {
		adminError(w, http.StatusBadRequest, "bad_request",
			`the body must be {"text": "...", "texts": {"<language>": "..."}} (texts optional)`)
		return
	}
	if err := n.Check(); err != nil {
		adminProblems(w, http.StatusUnprocessableEntity, "invalid_notice", "the notice is not valid", err)
		return
	}
	a.update(w, r, "notice", func(c *admission.Control) { c.Notice = &n }, "languages", len(n.Texts))
}

// adminProblems answers a request whose content is well-formed but not
// valid: the error body plus "problems", every problem found (messages
// of our own validation, naming the field; never an internal error).
func adminProblems(w http.ResponseWriter, status int, code, message string, err error) {
	problems := []string{}
	for _, line := range strings.Split(err.Error(), "\n") {
		if line != "" {
			problems = append(problems, line)
		}
	}
	adminJSON(w, status, struct {
		Error    string   `json:"error"`
		Message  string   `json:"message"`
		Problems []string `json:"problems"`
	}{code, message, problems})
}
