-- wrk script of the join benchmark: every request is a join without a
-- cookie, so waitroom takes each one for a new visitor.
wrk.method = "POST"
wrk.body = '{"event":"bench"}'
wrk.headers["Content-Type"] = "application/json"
