-- post.lua: wrk script for benchmarks/http/run.sh.
--
--   wrk ... -s post.lua URL -- KIND KEY NUMBERS_FILE
--
-- KIND is rest (POST /api/v1/lrn with include_enhanced_lrn) or graphql
-- (lookupLrn with includeEnhancedLrn); KEY is the API key; NUMBERS_FILE holds
-- one 11-digit number per line. Each thread starts at its own offset and
-- walks the numbers in order, so that the requests spread over the table.
-- done() prints one line, "RESULT <json>", that run.sh reads.

local kind, key, file
local bodies = {}
local i = 0
local counter = 0
local threads = {}

function setup(thread)
	thread:set("id", counter)
	counter = counter + 1
	table.insert(threads, thread)
end

function init(args)
	kind, key, file = args[1], args[2], args[3]
	for n in io.lines(file) do
		if kind == "graphql" then
			table.insert(bodies, '{"query":"query($n: String!) { lookupLrn(phoneNumber: $n, includeEnhancedLrn: true) { lrn lrn_activated_at enhanced_lrn_data { carrier carrier_type city zip_code county timezone state rate_center lata ocn } } }","variables":{"n":"' .. n .. '"}}')
		else
			table.insert(bodies, '{"phone_number":"' .. n .. '","include_enhanced_lrn":true}')
		end
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
		'RESULT {"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"non2xx":%d,"socket_errors":%d}\n',
		summary.requests, secs, summary.requests / secs,
		latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
		e.status, e.connect + e.read + e.write + e.timeout))
end
