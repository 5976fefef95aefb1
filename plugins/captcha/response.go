package captcha

import (
	"encoding/json"
	"errors"
	"time"
)

// response is a siteverify answer: the union of the three providers'
// fields. Fields a provider does not send stay zero.
type response struct {
	// Whether the provider vouches for the token (all).
	Success bool
	// When the challenge was solved, ISO 8601 (all).
	ChallengeTS string
	// Hostname of the page the token was solved on (all).
	Hostname string
	// Why the token was refused (all); empty on success.
	ErrorCodes []string
	// The widget's action (Turnstile; reCAPTCHA v3).
	Action string
	// The widget's customer data (Turnstile).
	CData string
	// reCAPTCHA v3: 0.0 (bot) to 1.0 (person). hCaptcha Enterprise: a
	// risk score, higher is riskier. Nil when absent.
	Score *float64
	// hCaptcha Enterprise: reasons for the score.
	ScoreReason []string
	// hCaptcha: whether the response will be credited.
	Credit bool
}

// wireResponse is response as the providers spell it.
type wireResponse struct {
	Success     *bool    `json:"success"`
	ChallengeTS string   `json:"challenge_ts"`
	Hostname    string   `json:"hostname"`
	ErrorCodes  []string `json:"error-codes"`
	Action      string   `json:"action"`
	CData       string   `json:"cdata"`
	Score       *float64 `json:"score"`
	ScoreReason []string `json:"score_reason"`
	Credit      bool     `json:"credit"`
}

var errNoSuccess = errors.New("answer has no success field")

// parseResponse reads a siteverify answer. An answer that is not a JSON
// object with a boolean success is an error: whatever sent it is not the
// provider speaking (a captive portal, a proxy's error page).
func parseResponse(body []byte) (*response, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, err
	}
	if w.Success == nil {
		return nil, errNoSuccess
	}
	return &response{
		Success:     *w.Success,
		ChallengeTS: w.ChallengeTS,
		Hostname:    w.Hostname,
		ErrorCodes:  w.ErrorCodes,
		Action:      w.Action,
		CData:       w.CData,
		Score:       w.Score,
		ScoreReason: w.ScoreReason,
		Credit:      w.Credit,
	}, nil
}

// Layouts of challenge_ts: RFC 3339 with or without fractional seconds
// (Turnstile "2022-10-06T00:07:23.274Z", reCAPTCHA
// "2024-01-02T15:04:05Z"), and the colon-less offset Google's docs name
// (yyyy-MM-dd'T'HH:mm:ssZZ).
var tsLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700"}

func parseTime(s string) (time.Time, bool) {
	if s == "" || len(s) > 64 {
		return time.Time{}, false
	}
	for _, layout := range tsLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
