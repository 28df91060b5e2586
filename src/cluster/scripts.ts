/**
 * The Lua scripts the cluster runs in Redis. Each is atomic, so presence never shows half a
 * change, and routing happens where the presence is: one script call per flush routes every
 * message of the batch, with no lookup round trip and no cache of owners to go stale.
 *
 * Keys (all under `<cluster_name>:`):
 *   srv:<id>            a live server's info (JSON), expires presence_ttl after its last heartbeat
 *   servers             sorted set: server id → when its presence expires (Redis time, ms)
 *   sess:<session>      hash: s = server holding the session, a = account logged in on it
 *   acct:<account>      `<server>|<session>` the account is logged in on
 *   grp:<group>         set of servers with members in the group
 *   srvsess:<id>, srvacct:<id>, srvgrp:<id>   what a server registered (to clean up after it)
 *   stream:<id>         the server's inbound stream of batches
 *   seq:<id>            hash: destination → batches this server sent there (gap detection)
 *   expired:<id>        when a sweep removed the presence of server <id> (it may be paused);
 *                       its stream and seq stay as long as this key does
 *   maintenance         the last maintenance record broadcast to the cluster
 * A server counts as live while `srv:<id>` exists; everything else it registered is ignored
 * once that key is gone, and removed by the first live server that notices.
 */

/** Shared helpers: P is the key prefix (ARGV[1]), `live(s)` is memoised per call. */
const PRELUDE = `
local P = ARGV[1]
local alive = {}
local function live(s)
  local a = alive[s]
  if a == nil then a = redis.call('EXISTS', P .. 'srv:' .. s) == 1; alive[s] = a end
  return a
end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- An account entry counts only while its server is live and still holds the session.
local function holder(v)
  if not v then return nil end
  local bar = string.find(v, '|', 1, true)
  local s, sid = string.sub(v, 1, bar - 1), string.sub(v, bar + 1)
  if live(s) and redis.call('HGET', P .. 'sess:' .. sid, 's') == s then return s, sid end
  return nil
end
-- Why messages for server s (not live) go nowhere: s itself when its presence expired (its
-- entry in \`servers\` is still there, or a sweep marked it), '' when it stopped or is unknown.
local expired = {}
local function expired_for(s)
  if not s or s == ARGV[2] then return '' end
  local e = expired[s]
  if e == nil then
    e = redis.call('ZSCORE', P .. 'servers', s) ~= false or redis.call('EXISTS', P .. 'expired:' .. s) == 1
    expired[s] = e
  end
  if e then return s end
  return ''
end
-- Removes everything server d registered (a dead server, or this id's previous process). With
-- keep_ms (a sweep: d's presence expired, and d may only be paused) its stream and its sequence
-- numbers stay for keep_ms, so that d reads what was written for it and numbers on where it left off.
local function cleanup(d, keep_ms)
  for _, sid in ipairs(redis.call('SMEMBERS', P .. 'srvsess:' .. d)) do
    if redis.call('HGET', P .. 'sess:' .. sid, 's') == d then redis.call('DEL', P .. 'sess:' .. sid) end
  end
  for _, a in ipairs(redis.call('SMEMBERS', P .. 'srvacct:' .. d)) do
    local v = redis.call('GET', P .. 'acct:' .. a)
    if v and string.sub(v, 1, #d + 1) == d .. '|' then redis.call('DEL', P .. 'acct:' .. a) end
  end
  for _, g in ipairs(redis.call('SMEMBERS', P .. 'srvgrp:' .. d)) do redis.call('SREM', P .. 'grp:' .. g, d) end
  redis.call('DEL', P .. 'srvsess:' .. d, P .. 'srvacct:' .. d, P .. 'srvgrp:' .. d)
  if keep_ms then
    redis.call('PEXPIRE', P .. 'seq:' .. d, keep_ms)
    redis.call('PEXPIRE', P .. 'stream:' .. d, keep_ms)
    redis.call('SET', P .. 'expired:' .. d, now_ms(), 'PX', keep_ms)
  else
    redis.call('DEL', P .. 'seq:' .. d, P .. 'stream:' .. d, P .. 'expired:' .. d)
  end
  redis.call('ZREM', P .. 'servers', d)
end
`;

/**
 * One flush: ARGV = P, self, epoch, batch number, stream max length, then (kind, key, payload)
 * triples in order. Kinds:
 *   S key=session  payload=records for it (its server is looked up, and answered in `learned`)
 *   D key=server   payload=records for sessions known to be there
 *   G key=group    payload=records for its members elsewhere
 *   A key=''       payload=records for every other live server
 *   V key=server   payload=records for that server (answers 1 if live, else 0)
 *   O/C key=session opened/closed here        J/L key=group: this server has members / none left
 *   K key=account  payload=`<session>|<policy>`: a login (answers ok, refused|holder, replaced|holder)
 *   R key=account  payload=session: a logout
 * Records for each destination are appended in op order into one stream entry. Returns
 * {positions (from 1) of the S and D ops that reached no live server, answers of the V and K
 * ops in order, [session, server, …] found for S ops, and for each unroutable op the server it
 * was meant for when that server's presence expired, else ''}.
 */
const ROUTE = PRELUDE + `
local self, epoch, bn, maxlen = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local out, order, owner = {}, {}, {}
local function add(s, payload)
  local l = out[s]
  if l == nil then l = {}; out[s] = l; order[#order + 1] = s end
  l[#l + 1] = payload
end
local unroutable, answers, learned, members, lost = {}, {}, {}, {}, {}
local function drop(position, server)
  unroutable[#unroutable + 1] = position
  lost[#lost + 1] = expired_for(server)
end
local i, n, op = 6, #ARGV, 0
while i + 2 <= n do
  local kind, key, payload = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  i = i + 3
  op = op + 1
  if kind == 'D' then
    if key ~= self and live(key) then add(key, payload) else drop(op, key) end
  elseif kind == 'S' then
    local s = owner[key]
    if s == nil then
      s = redis.call('HGET', P .. 'sess:' .. key, 's') or false
      owner[key] = s
      if s and s ~= self and live(s) then learned[#learned + 1] = key; learned[#learned + 1] = s end
    end
    if s and s ~= self and live(s) then add(s, payload) else drop(op, s) end
  elseif kind == 'G' then
    local m = members[key]
    if m == nil then m = redis.call('SMEMBERS', P .. 'grp:' .. key); members[key] = m end
    for _, s in ipairs(m) do
      if s ~= self and live(s) then add(s, payload) end
    end
  elseif kind == 'A' then
    for _, s in ipairs(redis.call('ZRANGE', P .. 'servers', 0, -1)) do
      if s ~= self and live(s) then add(s, payload) end
    end
  elseif kind == 'V' then
    if key ~= self and live(key) then add(key, payload); answers[#answers + 1] = 1 else answers[#answers + 1] = 0 end
  elseif kind == 'O' then
    redis.call('HSET', P .. 'sess:' .. key, 's', self)
    redis.call('SADD', P .. 'srvsess:' .. self, key)
  elseif kind == 'C' then
    if redis.call('HGET', P .. 'sess:' .. key, 's') == self then redis.call('DEL', P .. 'sess:' .. key) end
    redis.call('SREM', P .. 'srvsess:' .. self, key)
  elseif kind == 'J' then
    members[key] = nil
    redis.call('SADD', P .. 'grp:' .. key, self)
    redis.call('SADD', P .. 'srvgrp:' .. self, key)
  elseif kind == 'L' then
    members[key] = nil
    redis.call('SREM', P .. 'grp:' .. key, self)
    redis.call('SREM', P .. 'srvgrp:' .. self, key)
  elseif kind == 'K' then
    local bar = string.find(payload, '|', 1, true)
    local sid, policy = string.sub(payload, 1, bar - 1), string.sub(payload, bar + 1)
    local mine = self .. '|' .. sid
    local cur = redis.call('GET', P .. 'acct:' .. key)
    local hs, hsid = nil, nil
    if cur ~= mine then hs, hsid = holder(cur) end
    if hs and policy == 'refuse' then
      answers[#answers + 1] = 'refused|' .. cur
    else
      redis.call('SET', P .. 'acct:' .. key, mine)
      redis.call('SADD', P .. 'srvacct:' .. self, key)
      redis.call('HSET', P .. 'sess:' .. sid, 'a', key)
      if hs then
        redis.call('HDEL', P .. 'sess:' .. hsid, 'a')
        if hs ~= self then
          local text = hsid .. '|' .. key
          add(hs, string.char(6) .. struct.pack('<I4', #text) .. text)
        end
        answers[#answers + 1] = 'replaced|' .. cur
      else
        answers[#answers + 1] = 'ok'
      end
    end
  elseif kind == 'R' then
    local v = redis.call('GET', P .. 'acct:' .. key)
    if v == self .. '|' .. payload then redis.call('DEL', P .. 'acct:' .. key); v = false end
    -- Another session of this server may hold the account now: it stays in srvacct then.
    if not v or string.sub(v, 1, #self + 1) ~= self .. '|' then redis.call('SREM', P .. 'srvacct:' .. self, key) end
    if redis.call('HGET', P .. 'sess:' .. payload, 'a') == key then redis.call('HDEL', P .. 'sess:' .. payload, 'a') end
  end
end
for _, s in ipairs(order) do
  local q = redis.call('HINCRBY', P .. 'seq:' .. self, s, 1)
  redis.call('XADD', P .. 'stream:' .. s, 'MAXLEN', '~', maxlen, '*', 's', self, 'e', epoch, 'b', bn, 'q', q, 'd', table.concat(out[s]))
end
return {unroutable, answers, learned, lost}
`;

/**
 * A heartbeat: ARGV = P, self, info (JSON), ttl ms, instance. Renews this server's presence and
 * returns {whether it was still live before, [id, info, …] of the live servers, ids whose
 * presence expired}; or {-1, the holder's info} when another process holds this id now (it
 * took the id over while this one was paused past its TTL), renewing nothing.
 */
const HEARTBEAT = PRELUDE + `
local self, info, ttl, instance = ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local now = now_ms()
local cur = redis.call('GET', P .. 'srv:' .. self)
if cur then
  local ok, decoded = pcall(cjson.decode, cur)
  if ok and decoded.instance ~= instance then return {-1, cur} end
end
local existed = cur and 1 or 0
redis.call('SET', P .. 'srv:' .. self, info, 'PX', ttl)
redis.call('ZADD', P .. 'servers', now + ttl, self)
local servers = {}
for _, s in ipairs(redis.call('ZRANGEBYSCORE', P .. 'servers', now, '+inf')) do
  local v = redis.call('GET', P .. 'srv:' .. s)
  if v then servers[#servers + 1] = s; servers[#servers + 1] = v end
end
local dead = redis.call('ZRANGEBYSCORE', P .. 'servers', '-inf', '(' .. now, 'LIMIT', 0, 16)
return {existed, servers, dead}
`;

/**
 * Removes the presence of a server that stopped heartbeating (ARGV = P, id, keep ms); 0 if it is
 * live again or another server removed it first. Its stream and sequence numbers are kept for `keep ms` (see cleanup).
 */
const SWEEP = PRELUDE + `
local d = ARGV[2]
if redis.call('EXISTS', P .. 'srv:' .. d) == 1 then return 0 end
-- Another live server may have swept it first: only the first removal counts.
local listed = redis.call('ZSCORE', P .. 'servers', d) ~= false
cleanup(d, tonumber(ARGV[3]))
if listed then return 1 end
return 0
`;

/**
 * Registers this server with everything it holds: ARGV = P, self, info, ttl, instance,
 * fresh (1 at start: remove what a previous process with this id left), then a count and the
 * sessions, a count and the groups, a count and (account, session) pairs. Answers
 * {'in_use', info, pttl} when another live process has this id, else {'ok', accounts now held
 * elsewhere (a newer login while this server was away), 1 when another server had removed this
 * server's presence (its stream, kept, is its own again), else 0}.
 */
const REGISTER = PRELUDE + `
local self, info, ttl, instance, fresh = ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6]
local cur = redis.call('GET', P .. 'srv:' .. self)
if cur then
  local ok, decoded = pcall(cjson.decode, cur)
  if ok and decoded.instance ~= instance then return {'in_use', cur, redis.call('PTTL', P .. 'srv:' .. self)} end
end
local swept = 0
if fresh == '1' then
  cleanup(self)
elseif redis.call('DEL', P .. 'expired:' .. self) == 1 then
  swept = 1
  redis.call('PERSIST', P .. 'stream:' .. self)
  redis.call('PERSIST', P .. 'seq:' .. self)
end
redis.call('SET', P .. 'srv:' .. self, info, 'PX', ttl)
redis.call('ZADD', P .. 'servers', now_ms() + ttl, self)
alive[self] = true
local i = 7
local n = tonumber(ARGV[i]); i = i + 1
for k = 1, n do
  redis.call('HSET', P .. 'sess:' .. ARGV[i], 's', self)
  redis.call('SADD', P .. 'srvsess:' .. self, ARGV[i])
  i = i + 1
end
n = tonumber(ARGV[i]); i = i + 1
for k = 1, n do
  redis.call('SADD', P .. 'grp:' .. ARGV[i], self)
  redis.call('SADD', P .. 'srvgrp:' .. self, ARGV[i])
  i = i + 1
end
local conflicts = {}
n = tonumber(ARGV[i]); i = i + 1
for k = 1, n do
  local a, sid = ARGV[i], ARGV[i + 1]
  i = i + 2
  local mine = self .. '|' .. sid
  local v = redis.call('GET', P .. 'acct:' .. a)
  local hs = nil
  if v ~= mine then hs = holder(v) end
  if hs and hs ~= self then
    conflicts[#conflicts + 1] = a
    conflicts[#conflicts + 1] = sid
  else
    redis.call('SET', P .. 'acct:' .. a, mine)
    redis.call('SADD', P .. 'srvacct:' .. self, a)
    redis.call('HSET', P .. 'sess:' .. sid, 'a', a)
  end
end
return {'ok', conflicts, swept}
`;

/** A graceful stop: removes this server's presence (ARGV = P, self, instance). */
const DEREGISTER = PRELUDE + `
local self, instance = ARGV[2], ARGV[3]
-- What another process holds under this id (it took the id over) is not this one's to remove.
local cur = redis.call('GET', P .. 'srv:' .. self)
if cur then
  local ok, decoded = pcall(cjson.decode, cur)
  if ok and decoded.instance ~= instance then return 0 end
end
cleanup(self)
redis.call('DEL', P .. 'srv:' .. self)
return 1
`;

/** Where an account is logged in (ARGV = P, account): `<server>|<session>`, or false. */
const LOCATE = PRELUDE + `
local v = redis.call('GET', P .. 'acct:' .. ARGV[2])
local s = holder(v)
if s then return v end
return false
`;

/** Which live server holds a session and its account (ARGV = P, session): {server, account or ''}, or false. */
const SESSION = PRELUDE + `
local h = redis.call('HMGET', P .. 'sess:' .. ARGV[2], 's', 'a')
if h[1] and live(h[1]) then return {h[1], h[2] or ''} end
return false
`;

export const SCRIPTS = {
  gsfRoute: ROUTE,
  gsfHeartbeat: HEARTBEAT,
  gsfSweep: SWEEP,
  gsfRegister: REGISTER,
  gsfDeregister: DEREGISTER,
  gsfLocate: LOCATE,
  gsfSession: SESSION,
} as const;

export type ScriptName = keyof typeof SCRIPTS;
