-- wrk's script for scripts/hop/run.py: POSTs `tools/call` of the echo tool, JSON-RPC over
-- Streamable HTTP, and checks every answer.
--
--   wrk ... -s call.lua URL -- TOOL VERSION SID1,SID2,... THREADS
--
-- The sessions (opened by run.py: initialize + notifications/initialized) are dealt to wrk's
-- threads in turn; each thread hands its own out round robin, one a request, so with as many
-- sessions as connections a session has one request in flight on average. A 2026-07-28 run
-- passes `-` for no session. An answer counts as bad unless its status is 200 and its body holds
-- a result with the echoed text and no `"isError":true` (a peer may leave a false isError out);
-- done() prints one JSON line with wrk's figures and the bad answers (and the first one's body).

local TEXT = "hop-echo-0123456789"
local threads = {}
local sids, tool, version = {}, "echo", "2025-11-25"

function setup(thread)
   thread:set("index", #threads)
   table.insert(threads, thread)
end

function init(args)
   tool, version = args[1], args[2]
   local all = {}
   for s in string.gmatch(args[3] or "-", "[^,]+") do
      if s ~= "-" then table.insert(all, s) end
   end
   -- This thread's share: sessions index, index + nthreads, ...
   local nthreads = tonumber(args[4] or "1")
   for i = index + 1, #all, nthreads do table.insert(sids, all[i]) end
   if #sids == 0 then sids = all end
   bad, first_bad, n = 0, "", 0
end

function request()
   n = n + 1
   local headers = {
      ["Content-Type"] = "application/json",
      ["Accept"] = "application/json, text/event-stream",
      ["Mcp-Protocol-Version"] = version,
   }
   if #sids > 0 then headers["Mcp-Session-Id"] = sids[(n % #sids) + 1] end
   local meta = ""
   if version == "2026-07-28" then
      headers["Mcp-Method"] = "tools/call"
      headers["Mcp-Name"] = tool
      meta = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
         '"io.modelcontextprotocol/clientInfo":{"name":"hop-wrk","version":"1"},' ..
         '"io.modelcontextprotocol/clientCapabilities":{}}'
   end
   local body = '{"jsonrpc":"2.0","id":' .. (index * 1000000000 + n) ..
      ',"method":"tools/call","params":{"name":"' .. tool ..
      '","arguments":{"text":"' .. TEXT .. '"}' .. meta .. '}}'
   return wrk.format("POST", nil, headers, body)
end

function response(status, headers, body)
   if status ~= 200 or not string.find(body, '"result"', 1, true)
      or string.find(body, '"isError":true', 1, true)
      or not string.find(body, TEXT, 1, true) then
      bad = bad + 1
      if first_bad == "" then first_bad = status .. " " .. string.sub(body, 1, 300) end
   end
end

local function quote(s)
   return '"' .. string.gsub(s, '[%c"\\]', function(c) return string.format("\\u%04x", string.byte(c)) end) .. '"'
end

function done(summary, latency, requests)
   local bad_all, first = 0, ""
   for _, t in ipairs(threads) do
      bad_all = bad_all + t:get("bad")
      if first == "" then first = t:get("first_bad") end
   end
   local e = summary.errors
   io.write(string.format(
      '\nHOP {"requests":%d,"duration_us":%d,"bad":%d,"connect":%d,"read":%d,"write":%d,' ..
      '"status":%d,"timeout":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"mean_us":%.1f,"first_bad":%s}\n',
      summary.requests, summary.duration, bad_all, e.connect, e.read, e.write, e.status, e.timeout,
      latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean, quote(first)))
end
