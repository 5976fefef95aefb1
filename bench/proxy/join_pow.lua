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
local bodies

function init(args)
   bodies = assert(io.open(args[1], "r"))
   wrk.method = "POST"
   wrk.headers["Content-Type"] = "application/json"
   wrk.headers["User-Agent"] = args[2]
end

function request()
   local body = bodies:read("*l")
   if body == nil then
      exhausted = exhausted + 1
      body = '{"event":"bench"}'
   end
   return wrk.format(nil, nil, nil, body)
end

function done(summary, latency, requests)
   for _, t in ipairs(threads) do
      local n = t:get("exhausted")
      if n > 0 then
         io.write(string.format("join_pow.lua: ran out of solved challenges, %d joins sent without one\n", n))
      end
   end
end
