-- live.lua: wrk script for benchmarks/live/run.sh.
--
--   wrk ... -s live.lua http://HOST:PORT/api/v1/lrn -- KEY NUMBERS_FILE
--
-- Every request is POST /api/v1/lrn {"phone_number":…,"include_enhanced_lrn":true}
-- with Authorization: Bearer KEY; NUMBERS_FILE holds one 11-digit number per
-- line, walked in order from an offset of each thread's own. done() prints
-- one line, "RESULT <json>", that run.sh reads.

local key, file
local bodies = {}
local i = 0
local counter = 0

function setup(thread)
	thread:set("id", counter)
	counter = counter + 1
end

function init(args)
	key, file = args[1], args[2]
	for n in io.lines(file) do
		table.insert(bodies, '{"phone_number":"' .. n .. '","include_enhanced_lrn":true}')
	end
	if #bodies == 0 then
		error("no numbers in " .. file)
	end
	i = (id * 7919) % #bodies
	wrk.method = "POST"
	wrk.headers["Content-Type"] = "application/json"
	wrk.headers["Authorization"] = "Bearer " .. key
end

function request()
	i = i % #bodies + 1
	return wrk.format(nil, nil, nil, bodies[i])
end

function done(summary, latency, requests)
	local secs = summary.duration / 1e6
	local e = summary.errors
	io.write(string.format(
		'RESULT {"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_us":%d,"p99_us":%d,"max_us":%d,"non2xx":%d,"socket_errors":%d}\n',
		summary.requests, secs, summary.requests / secs,
		latency:percentile(50), latency:percentile(99), latency.max,
		e.status, e.connect + e.read + e.write + e.timeout))
end
