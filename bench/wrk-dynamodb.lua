-- wrk script: DynamoDB JSON 1.0 requests against any endpoint (dynindex-gateway
-- or dynalite), the same requests as bench/gateway-vs-dynalite.mjs's COMMANDS.
--
--   wrk -t1 -c1 -d10s -s bench/wrk-dynamodb.lua http://127.0.0.1:8091 -- GetItem [SIGNED]
--
-- SIGNED: a file of pre-signed requests from bench/wrk-sign.mjs (for a
-- gateway with authentication), sent in a loop instead of generated ones.
--
-- Operations: PutItem (random new keys), GetItem (a seeded item; the answer
-- must contain it), Query (pk = :p AND sk >= :s, Limit 10; must return 10).
-- Every answer is checked: a non-200 status or a wrong body counts as an
-- error.  done() prints one line of JSON: requests, errors, the socket errors
-- and the latency histogram (microseconds -> count) for pooling over rounds.

local PARTS, ITEMS = 200, 20
local TABLE = "gwbench"
local payload = string.rep("v", 200)
local op = "GetItem"
local signed, next_signed = nil, 1	-- pre-signed requests (bench/wrk-sign.mjs)
local threads = {}
local errors, first_error = 0, nil

function setup(thread)
   table.insert(threads, thread)
end

function init(args)
   op = args[1] or "GetItem"
   if args[2] then
      local f = assert(io.open(args[2], "rb"))
      local data = f:read("*a")
      f:close()
      signed = {}
      for r in data:gmatch("[^%z]+") do signed[#signed + 1] = r end
      next_signed = math.random(1, #signed)
   end
   math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)"), 16) or 0) % 100000)
   local date = os.date("!%Y%m%dT%H%M%SZ")
   wrk.method = "POST"
   wrk.path = "/"
   wrk.headers["Content-Type"] = "application/x-amz-json-1.0"
   wrk.headers["X-Amz-Target"] = "DynamoDB_20120810." .. op
   wrk.headers["X-Amz-Date"] = date
   wrk.headers["Authorization"] = "AWS4-HMAC-SHA256 Credential=bench/" .. date:sub(1, 8) ..
      "/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=" ..
      string.rep("0", 64)
end

local function pad(i) return string.format("%03d", i) end

function request()
   if signed then
      next_signed = next_signed % #signed + 1
      return signed[next_signed]
   end
   local body
   if op == "PutItem" then
      body = string.format('{"TableName":"%s","Item":{"pk":{"S":"w%d"},"sk":{"S":"%s"},"n":{"N":"%d"},"data":{"S":"%s"}}}',
         TABLE, math.random(0, 99999), pad(math.random(0, ITEMS - 1)), math.random(0, 999999999), payload)
   elseif op == "GetItem" then
      body = string.format('{"TableName":"%s","Key":{"pk":{"S":"p%d"},"sk":{"S":"%s"}}}',
         TABLE, math.random(0, PARTS - 1), pad(math.random(0, ITEMS - 1)))
   else
      body = string.format('{"TableName":"%s","KeyConditionExpression":"pk = :p AND sk >= :s",' ..
         '"ExpressionAttributeValues":{":p":{"S":"p%d"},":s":{"S":"005"}},"Limit":10}',
         TABLE, math.random(0, PARTS - 1))
   end
   return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
   local ok = status == 200
   if ok and op == "GetItem" then ok = body:find('"Item"', 1, true) ~= nil end
   if ok and op == "Query" then ok = body:find('"Count":10', 1, true) ~= nil end
   if not ok then
      errors = errors + 1
      if first_error == nil then first_error = status .. " " .. body:sub(1, 200) end
   end
end

function done(summary, latency, requests)
   local errs, first = 0, nil
   for _, t in ipairs(threads) do
      errs = errs + (t:get("errors") or 0)
      first = first or t:get("first_error")
   end
   -- The latency distribution as 1,000 quantiles (each holding a thousandth of
   -- the requests).  Walking wrk's histogram value by value (latency(i)) costs
   -- a scan of the whole range per value: with 1,000 connections and latencies
   -- up to the 5 s timeout that took minutes.
   local hist, counts = {}, {}
   local n = summary.requests
   local points = 1000
   for q = 1, points do
      local c = math.floor(n * q / points) - math.floor(n * (q - 1) / points)
      if c > 0 then
         local v = latency:percentile(q * 100 / points)
         counts[v] = (counts[v] or 0) + c
      end
   end
   for v, c in pairs(counts) do hist[#hist + 1] = string.format('"%d":%d', v, c) end
   local e = summary.errors
   io.write(string.format('{"requests":%d,"duration_us":%d,"errors":%d,"socket_errors":%d,"first_error":%s,"hist":{%s}}\n',
      summary.requests, summary.duration, errs, e.connect + e.read + e.write + e.status + e.timeout,
      first and string.format("%q", first) or "null", table.concat(hist, ",")))
end
