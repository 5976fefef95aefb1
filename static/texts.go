package static

import (
	"regexp"
	"slices"
)

// languages are the languages the pages come in, in the order Languages
// returns them; English is the fallback.
var languages = []string{"en", "de", "es"}

// Languages returns the languages the waiting-room pages come in (BCP 47
// primary tags): "en", "de", "es". The slice is a fresh copy.
func Languages() []string { return slices.Clone(languages) }

// languageIndex returns the position of lang in languages, or -1.
func languageIndex(lang string) int { return slices.Index(languages, lang) }

// TextKeys returns every text key a PageConfig's Texts may override, in
// sorted order. Each key's English text shows what it is for; a text is
// plain text (never HTML) and keeps the {placeholders} of the built-in
// one.
func TextKeys() []string {
	keys := make([]string, 0, len(builtinTexts["en"]))
	for k := range builtinTexts["en"] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// BuiltinText returns the built-in text of key in lang, and whether
// there is one.
func BuiltinText(lang, key string) (string, bool) {
	s, ok := builtinTexts[lang][key]
	return s, ok
}

// placeholderRe finds the {name} placeholders the page script fills in.
var placeholderRe = regexp.MustCompile(`\{[a-z]+\}`)

// builtinTexts are the page texts per language. The keys are the same in
// every language (a test checks it, with the placeholders). Keys starting
// with busy_ and blocked_ are for the busy and blocked pages, title and
// noscript are written into the HTML, the rest go to the page script.
//
// Placeholders: {n} a number, {low} and {high} the ends of a range,
// {time} a local clock time.
var builtinTexts = map[string]map[string]string{
	"en": {
		"title":                "Waiting room",
		"joining":              "Joining the queue…",
		"h_scheduled":          "The queue opens soon",
		"h_prequeue":           "You're in the pre-queue",
		"h_waiting_for_draw":   "Waiting for the draw",
		"h_waiting":            "You're in the queue",
		"h_admitted":           "It's your turn",
		"h_sold_out":           "Sold out",
		"h_paused":             "The queue is paused",
		"h_closed":             "The queue is closed",
		"h_session_ended":      "Your place has expired",
		"h_error":              "Something went wrong",
		"msg_scheduled":        "Keep this page open: it joins the queue by itself when the queue opens.",
		"msg_prequeue":         "You have a place. Keep this page open: you'll move on by yourself when it's your turn.",
		"msg_waiting_for_draw": "The draw is about to decide the order. Keep this page open.",
		"msg_waiting":          "Keep this page open: you'll move on by yourself when it's your turn.",
		"msg_admitted":         "Taking you to the sale…",
		"msg_sold_out":         "Everything has been sold. Thank you for waiting.",
		"msg_paused":           "The queue has stopped for a moment. Keep this page open: you keep your place.",
		"msg_closed":           "The queue has closed.",
		"msg_session_ended":    "You were away too long, or your turn passed. You can join the queue again.",
		"msg_error":            "We could not put you in the queue. Please try again.",
		"h_checking":           "Checking your browser…",
		"msg_checking":         "Your browser is doing a short calculation that keeps bots out of the queue. It takes a few seconds; please keep this page open.",
		"h_captcha":            "One quick check",
		"msg_captcha":          "Please confirm you are a person to join the queue.",
		"captcha_instead":      "Taking too long? Solve a CAPTCHA instead",
		"msg_blocked":          "This request looks automated, so it was refused. If you are a person, try another network or browser, or contact the organiser.",
		"msg_cookies":          "Please allow cookies for this site: the waiting room keeps your place in a cookie.",
		"msg_offline":          "Connection problem. Retrying… You keep your place.",
		"ahead_one":            "{n} person ahead of you",
		"ahead_other":          "{n} people ahead of you",
		"ahead_approx":         "about {n} people ahead of you",
		"ahead_none":           "You're next",
		"eta_label":            "Estimated wait",
		"eta_estimating":       "estimating…",
		"eta_soon":             "less than a minute",
		"eta_min_one":          "about {n} minute",
		"eta_min_other":        "about {n} minutes",
		"eta_range_min":        "about {low}–{high} minutes",
		"eta_hour_one":         "about {n} hour",
		"eta_hour_other":       "about {n} hours",
		"eta_range_hours":      "about {low}–{high} hours",
		"progress_label":       "Your progress in the queue",
		"countdown_open":       "The queue opens in",
		"countdown_sale":       "The sale starts in",
		"countdown_draw":       "The draw is in",
		"countdown_now":        "Any moment now…",
		"days_one":             "{n} day",
		"days_other":           "{n} days",
		"local_time":           "(at {time}, your time)",
		"draw_before":          "When the sale starts, everyone who arrived before it is put in a random order by a public draw: arriving early is enough, there is no need to be first.",
		"draw_after":           "Everyone who arrived before the sale started was put in a random order by a public draw.",
		"draw_after_tranche":   "Everyone who arrived within the same few seconds as you was put in a random order by a public draw.",
		"draw_link":            "Check the draw",
		"continue":             "Continue",
		"join_again":           "Join the queue again",
		"try_again":            "Try again",
		"noscript":             "This waiting room needs JavaScript to keep your place in the queue. Please turn it on and reload the page.",
		"busy_title":           "We're very busy",
		"busy_text":            "Too many people are visiting right now. This page tries again by itself in a few seconds.",
		"busy_retry":           "Try again now",
		"blocked_title":        "Please join the queue",
		"blocked_text":         "This page is only open to visitors who have come through the waiting room.",
		"blocked_link":         "Join the queue",
	},
	"de": {
		"title":                "Warteraum",
		"joining":              "Sie werden in die Warteschlange eingereiht…",
		"h_scheduled":          "Die Warteschlange öffnet bald",
		"h_prequeue":           "Sie sind in der Vorwarteschlange",
		"h_waiting_for_draw":   "Warten auf die Auslosung",
		"h_waiting":            "Sie sind in der Warteschlange",
		"h_admitted":           "Sie sind an der Reihe",
		"h_sold_out":           "Ausverkauft",
		"h_paused":             "Die Warteschlange ist pausiert",
		"h_closed":             "Die Warteschlange ist geschlossen",
		"h_session_ended":      "Ihr Platz ist verfallen",
		"h_error":              "Etwas ist schiefgelaufen",
		"msg_scheduled":        "Lassen Sie diese Seite geöffnet: Sie reiht sich von selbst ein, sobald die Warteschlange öffnet.",
		"msg_prequeue":         "Ihr Platz ist sicher. Lassen Sie diese Seite geöffnet: Es geht von selbst weiter, wenn Sie an der Reihe sind.",
		"msg_waiting_for_draw": "Gleich entscheidet die Auslosung über die Reihenfolge. Lassen Sie diese Seite geöffnet.",
		"msg_waiting":          "Lassen Sie diese Seite geöffnet: Es geht von selbst weiter, wenn Sie an der Reihe sind.",
		"msg_admitted":         "Sie werden zum Verkauf weitergeleitet…",
		"msg_sold_out":         "Alles ist verkauft. Danke fürs Warten.",
		"msg_paused":           "Die Warteschlange steht kurz still. Lassen Sie diese Seite geöffnet: Ihr Platz bleibt erhalten.",
		"msg_closed":           "Die Warteschlange wurde geschlossen.",
		"msg_session_ended":    "Sie waren zu lange weg, oder Ihre Zeit ist abgelaufen. Sie können sich erneut anstellen.",
		"msg_error":            "Wir konnten Sie nicht in die Warteschlange einreihen. Bitte versuchen Sie es erneut.",
		"h_checking":           "Ihr Browser wird geprüft…",
		"msg_checking":         "Ihr Browser führt eine kurze Berechnung aus, die Bots aus der Warteschlange hält. Das dauert einige Sekunden; bitte lassen Sie diese Seite geöffnet.",
		"h_captcha":            "Eine kurze Prüfung",
		"msg_captcha":          "Bitte bestätigen Sie, dass Sie ein Mensch sind, um sich einzureihen.",
		"captcha_instead":      "Dauert es zu lange? Lösen Sie stattdessen ein CAPTCHA",
		"msg_blocked":          "Diese Anfrage wirkt automatisiert und wurde abgelehnt. Wenn Sie ein Mensch sind, versuchen Sie ein anderes Netz oder einen anderen Browser, oder wenden Sie sich an den Veranstalter.",
		"msg_cookies":          "Bitte erlauben Sie Cookies für diese Website: Der Warteraum merkt sich Ihren Platz in einem Cookie.",
		"msg_offline":          "Verbindungsproblem. Neuer Versuch läuft… Ihr Platz bleibt erhalten.",
		"ahead_one":            "{n} Person vor Ihnen",
		"ahead_other":          "{n} Personen vor Ihnen",
		"ahead_approx":         "etwa {n} Personen vor Ihnen",
		"ahead_none":           "Sie sind als Nächstes dran",
		"eta_label":            "Geschätzte Wartezeit",
		"eta_estimating":       "wird geschätzt…",
		"eta_soon":             "weniger als eine Minute",
		"eta_min_one":          "etwa {n} Minute",
		"eta_min_other":        "etwa {n} Minuten",
		"eta_range_min":        "etwa {low}–{high} Minuten",
		"eta_hour_one":         "etwa {n} Stunde",
		"eta_hour_other":       "etwa {n} Stunden",
		"eta_range_hours":      "etwa {low}–{high} Stunden",
		"progress_label":       "Ihr Fortschritt in der Warteschlange",
		"countdown_open":       "Die Warteschlange öffnet in",
		"countdown_sale":       "Der Verkauf beginnt in",
		"countdown_draw":       "Die Auslosung ist in",
		"countdown_now":        "Jeden Moment…",
		"days_one":             "{n} Tag",
		"days_other":           "{n} Tagen",
		"local_time":           "(um {time} Ihrer Zeit)",
		"draw_before":          "Wenn der Verkauf beginnt, bringt eine öffentliche Auslosung alle, die vorher da waren, in eine zufällige Reihenfolge: Früh da zu sein genügt, niemand muss der Erste sein.",
		"draw_after":           "Alle, die vor Verkaufsbeginn da waren, hat eine öffentliche Auslosung in eine zufällige Reihenfolge gebracht.",
		"draw_after_tranche":   "Alle, die in denselben wenigen Sekunden wie Sie ankamen, hat eine öffentliche Auslosung in eine zufällige Reihenfolge gebracht.",
		"draw_link":            "Auslosung prüfen",
		"continue":             "Weiter",
		"join_again":           "Erneut anstellen",
		"try_again":            "Erneut versuchen",
		"noscript":             "Dieser Warteraum braucht JavaScript, um Ihren Platz in der Warteschlange zu halten. Bitte schalten Sie es ein und laden Sie die Seite neu.",
		"busy_title":           "Gerade ist sehr viel los",
		"busy_text":            "Im Moment sind zu viele Menschen gleichzeitig hier. Diese Seite versucht es in wenigen Sekunden von selbst erneut.",
		"busy_retry":           "Jetzt erneut versuchen",
		"blocked_title":        "Bitte stellen Sie sich an",
		"blocked_text":         "Diese Seite ist nur für Besucher offen, die durch den Warteraum gekommen sind.",
		"blocked_link":         "Zur Warteschlange",
	},
	"es": {
		"title":                "Sala de espera",
		"joining":              "Entrando en la cola…",
		"h_scheduled":          "La cola abre pronto",
		"h_prequeue":           "Estás en la precola",
		"h_waiting_for_draw":   "Esperando el sorteo",
		"h_waiting":            "Estás en la cola",
		"h_admitted":           "Es tu turno",
		"h_sold_out":           "Agotado",
		"h_paused":             "La cola está en pausa",
		"h_closed":             "La cola está cerrada",
		"h_session_ended":      "Tu lugar ha caducado",
		"h_error":              "Algo ha fallado",
		"msg_scheduled":        "Mantén esta página abierta: entrará en la cola por sí sola cuando abra.",
		"msg_prequeue":         "Ya tienes tu lugar. Mantén esta página abierta: pasarás automáticamente cuando sea tu turno.",
		"msg_waiting_for_draw": "El sorteo está a punto de decidir el orden. Mantén esta página abierta.",
		"msg_waiting":          "Mantén esta página abierta: pasarás automáticamente cuando sea tu turno.",
		"msg_admitted":         "Te llevamos a la venta…",
		"msg_sold_out":         "Se ha vendido todo. Gracias por esperar.",
		"msg_paused":           "La cola se ha detenido un momento. Mantén esta página abierta: conservas tu lugar.",
		"msg_closed":           "La cola se ha cerrado.",
		"msg_session_ended":    "Estuviste fuera demasiado tiempo o tu turno ya pasó. Puedes volver a entrar en la cola.",
		"msg_error":            "No hemos podido ponerte en la cola. Inténtalo de nuevo.",
		"h_checking":           "Comprobando tu navegador…",
		"msg_checking":         "Tu navegador está haciendo un breve cálculo que mantiene a los bots fuera de la cola. Tarda unos segundos; mantén esta página abierta.",
		"h_captcha":            "Una comprobación rápida",
		"msg_captcha":          "Confirma que eres una persona para entrar en la cola.",
		"captcha_instead":      "¿Tarda demasiado? Resuelve un CAPTCHA en su lugar",
		"msg_blocked":          "Esta solicitud parece automatizada y se ha rechazado. Si eres una persona, prueba con otra red u otro navegador, o contacta con el organizador.",
		"msg_cookies":          "Permite las cookies de este sitio: la sala de espera guarda tu lugar en una cookie.",
		"msg_offline":          "Problema de conexión. Reintentando… Conservas tu lugar.",
		"ahead_one":            "{n} persona delante de ti",
		"ahead_other":          "{n} personas delante de ti",
		"ahead_approx":         "unas {n} personas delante de ti",
		"ahead_none":           "Tu turno es el siguiente",
		"eta_label":            "Espera estimada",
		"eta_estimating":       "calculando…",
		"eta_soon":             "menos de un minuto",
		"eta_min_one":          "alrededor de {n} minuto",
		"eta_min_other":        "alrededor de {n} minutos",
		"eta_range_min":        "entre {low} y {high} minutos",
		"eta_hour_one":         "alrededor de {n} hora",
		"eta_hour_other":       "alrededor de {n} horas",
		"eta_range_hours":      "entre {low} y {high} horas",
		"progress_label":       "Tu progreso en la cola",
		"countdown_open":       "La cola abre en",
		"countdown_sale":       "La venta empieza en",
		"countdown_draw":       "El sorteo es en",
		"countdown_now":        "En cualquier momento…",
		"days_one":             "{n} día",
		"days_other":           "{n} días",
		"local_time":           "(a las {time}, tu hora)",
		"draw_before":          "Cuando empiece la venta, un sorteo público pondrá en orden aleatorio a todas las personas que llegaron antes: basta con llegar a tiempo, no hace falta ser el primero.",
		"draw_after":           "Un sorteo público puso en orden aleatorio a todas las personas que llegaron antes de que empezara la venta.",
		"draw_after_tranche":   "Un sorteo público puso en orden aleatorio a todas las personas que llegaron en los mismos pocos segundos que tú.",
		"draw_link":            "Comprobar el sorteo",
		"continue":             "Continuar",
		"join_again":           "Volver a la cola",
		"try_again":            "Intentar de nuevo",
		"noscript":             "Esta sala de espera necesita JavaScript para guardar tu lugar en la cola. Actívalo y vuelve a cargar la página.",
		"busy_title":           "Hay mucha gente ahora mismo",
		"busy_text":            "Demasiadas personas están visitando el sitio a la vez. Esta página lo volverá a intentar sola en unos segundos.",
		"busy_retry":           "Intentar ahora",
		"blocked_title":        "Entra en la cola",
		"blocked_text":         "Esta página solo está abierta a quienes han pasado por la sala de espera.",
		"blocked_link":         "Ir a la cola",
	},
}
