-- wrk script: every request holds one seat nobody asked for before.
-- Arguments: PATH TOKEN THREADS. Seats are S-<row>-<n> of a section of
-- 1,000 rows of 1,000 seats.
local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  path, token, nthreads = args[1], args[2], tonumber(args[3])
  counter = 0
  headers = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token }
end

function request()
  local n = counter * nthreads + tid
  counter = counter + 1
  local row, seat = math.floor(n / 1000) + 1, n % 1000 + 1
  local body = string.format('{"user":"fan-%d","seats":["S-%d-%d"]}', n % 5000, row, seat)
  return wrk.format("POST", path, headers, body)
end
