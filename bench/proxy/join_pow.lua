-- wrk script of the join benchmark with proof of work: every request is a
-- join without a cookie carrying a solved challenge. Arguments: the file of
-- join bodies the benchmark pre-solved, one a line, and the User-Agent the
-- challenges were fetched with (each is bound to it). Each line is sent
-- once; when the file runs out, joins go without a solution, waitroom
-- refuses them (403), the run shows non-2xx responses and is void, and
-- done() says why. One thread only: another would read the same lines and
-- replay their challenges.

local threads = {}

function setup(thread)
   table.insert(threads, thread)
   assert(#threads == 1, "join_pow.lua: run wrk with -t1, each challenge may be sent once")
end

exhausted = 0 -- joins sent without a solution; read by done()
local host, ua
refusal = "" -- the body of the first refused join; read by done()
local bodies

function init(args)
   bodies = assert(io.open(args[1], "r"))
   host, ua = wrk.headers["Host"], args[2]
end

function request()
   local body = bodies:read("*l")
   if body == nil then
      exhausted = exhausted + 1
      body = '{"event":"bench"}'
   end
   -- Written out, not wrk.format: wrk orders its headers table
   -- differently from run to run, and a challenge is bound to the order
   -- of Host and User-Agent (the benchmark fetched them in this order).
   return string.format("POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
      wrk.path, host, ua, #body, body)
end

function response(status, headers, body)
   if status >= 300 and refusal == "" then
      refusal = tostring(status) .. " " .. body
   end
end

function done(summary, latency, requests)
   for _, t in ipairs(threads) do
      local r = t:get("refusal")
      if r ~= "" then
         io.write(string.format("join_pow.lua: the first join refused: %s\n", r))
      end
      local n = t:get("exhausted")
      if n > 0 then
         io.write(string.format("join_pow.lua: ran out of solved challenges, %d joins sent without one\n", n))
      end
   end
end
