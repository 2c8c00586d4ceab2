-- post.lua: wrk script for benchmarks/http/run.sh, http/billing.sh,
-- http/redis.sh, live/run.sh and updatelog/run.sh.
--
--   wrk ... -s post.lua URL -- KIND KEY NUMBERS_FILE [QUERY HASH]
--
-- KIND is rest (POST /api/v1/lrn with include_enhanced_lrn), graphql
-- (QUERY, lookupLrn with includeEnhancedLrn, sent whole), graphql-apq (the
-- same as an automatic persisted query: its sha256 HASH and the variables),
-- bulk or bulk-gzip (POST /api/v1/lrn/bulk, 1,000 numbers with
-- include_enhanced_lrn; bulk-gzip asks for a gzip answer); KEY is the API
-- key; NUMBERS_FILE holds one 11-digit number per line. Each thread starts at its own offset and
-- walks the numbers in order, so that the requests spread over the table.
-- done() prints one line, "RESULT <json>", that the scripts read (lib.sh).

local kind, key, file, query, hash
local bulkSize = 1000
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
	kind, key, file, query, hash = args[1], args[2], args[3], args[4], args[5]
	local numbers = {}
	for n in io.lines(file) do
		table.insert(numbers, n)
		if kind == "graphql" then
			table.insert(bodies, '{"query":"' .. query .. '","variables":{"n":"' .. n .. '"}}')
		elseif kind == "graphql-apq" then
			table.insert(bodies, '{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"' .. hash .. '"}},"variables":{"n":"' .. n .. '"}}')
		elseif kind == "rest" then
			table.insert(bodies, '{"phone_number":"' .. n .. '","include_enhanced_lrn":true}')
		end
	end
	if kind == "bulk" or kind == "bulk-gzip" then
		-- Eight bodies of bulkSize numbers each, from spread offsets.
		for b = 0, 7 do
			local parts = {}
			for k = 1, bulkSize do
				parts[k] = '"' .. numbers[(b * 7919 + k) % #numbers + 1] .. '"'
			end
			table.insert(bodies, '{"phone_numbers":[' .. table.concat(parts, ",") .. '],"include_enhanced_lrn":true}')
		end
		if kind == "bulk-gzip" then
			wrk.headers["Accept-Encoding"] = "gzip"
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
