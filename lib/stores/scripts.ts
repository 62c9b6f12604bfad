// The Lua scripts of RedisTokenStore. Every value is stored as `<version>|<value>`, so a script
// compares versions without reading the rest. The one-key scripts are the contract's
// compare-and-set steps; the others are fast paths (docs/engine.md), sent only where every key is
// on one server.
import { script } from '../redis/lua-script';
import { ENTRY_BUDGET_WINDOW_MS } from '../core/entry-begin';

/**
 * The value at KEYS[1] and the milliseconds it has left, in one command.
 * Returns { stored value or nil, PTTL (-2: no key, -1: no expiry) }.
 */
export const READ_WITH_TTL = script(
  'readWithTtl',
  `
return { redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]) }
`,
);

/**
 * The contract's compare-and-set write. KEYS[1] the key; ARGV[1] `<expected version>|`, or ''
 * when no value may be stored (a value stored otherwise than `<version>|…` counts as none);
 * ARGV[2] the new stored value; ARGV[3] time to live (ms).
 * Returns 1 when written, 0 when the stored version differs.
 */
export const PUT_IF_VERSION = script(
  'putIfVersion',
  `
local current = redis.call('GET', KEYS[1])
local expected = ARGV[1]
if expected == '' then
  if current and string.match(current, '^[1-9]%d*|') then return 0 end
elseif not current or string.sub(current, 1, #expected) ~= expected then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`,
);

/**
 * The contract's delete of one version. KEYS[1] the key; ARGV[1] `<expected version>|`.
 * Returns 1 when deleted, else 0.
 */
export const DELETE_IF_VERSION = script(
  'deleteIfVersion',
  `
local current = redis.call('GET', KEYS[1])
if current and string.sub(current, 1, #ARGV[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`,
);

/**
 * Lua of the engine's steps on stored values: `read` (version and value, or nil), `write` (the
 * next version, as the contract's put makes it), `count` (derived-engine.ts countInWindow) and
 * `index` (derived-engine.ts reindex: the player's JSON index, expired entries dropped, the oldest
 * beyond `max` returned to be ended, alive as long as its longest-lived entry).
 */
const STEPS = `
local function read(key)
  local stored = redis.call('GET', key)
  local version = stored and string.match(stored, '^([1-9]%d*)|')
  if not version then return nil, nil end
  return tonumber(version), string.sub(stored, #version + 2)
end
local function write(key, version, value, ms)
  redis.call('SET', key, ((version or 0) + 1) .. '|' .. value, 'PX', ms)
end
local function count(key, increment, windowMs)
  local version, value = read(key)
  if not version then
    if increment ~= 1 then return 0, 0 end
    write(key, nil, '1', windowMs)
    return 1, windowMs
  end
  local n = tonumber(value) or 0
  local left = redis.call('PTTL', key)
  -- A value without a lifetime (set by hand) counts as a whole window.
  if left < 0 then left = tonumber(windowMs) elseif left < 1 then left = 1 end
  if increment == 0 then return n, left end
  local after = math.max(0, n + increment)
  if after == 0 then
    redis.call('DEL', key)
    return 0, 0
  end
  write(key, version, tostring(after), left)
  return after, left
end
local function index(key, sessionKey, expiresAt, now, max)
  local version, value = read(key)
  local entries = {}
  if value then
    local ok, decoded = pcall(cjson.decode, value)
    if ok and type(decoded) == 'table' then entries = decoded end
  end
  entries[sessionKey] = expiresAt
  local live, last, count = {}, 0, 0
  for member, at in pairs(entries) do
    if type(at) == 'number' and at > now then
      live[member] = at
      count = count + 1
      if at > last then last = at end
    end
  end
  local ended = {}
  if count > max then
    local others = {}
    for member in pairs(live) do
      if member ~= sessionKey then others[#others + 1] = member end
    end
    table.sort(others, function(a, b) return live[a] < live[b] end)
    for i = 1, count - max do
      ended[i] = others[i]
      live[others[i]] = nil
    end
  end
  write(key, version, cjson.encode(live), math.max(1, last - now))
  return ended
end
`;

/**
 * Only while the value at KEYS[1] is ARGV[1] (whatever its version): deletes it (ARGV[2] '') or
 * gives it ARGV[2] ms more to live. A lock's release or extension by its owner. Returns 1 when
 * done, else 0.
 */
export const IF_VALUE = script(
  'ifValue',
  `${STEPS}
local _, value = read(KEYS[1])
if value ~= ARGV[1] then return 0 end
if ARGV[2] == '' then return redis.call('DEL', KEYS[1]) end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
`,
);

/**
 * An entry's checks before its code exchange (docs/engine.md, "An entry's checks").
 * KEYS[1] the address's counter (unused when ARGV[1] is ''); KEYS[2] the hold; KEYS[3] the code's
 * claim; KEYS[4] the store-wide log-out generation; KEYS[5] the probe's claim; KEYS[6] the budget's
 * counter (unused when ARGV[6] is ''); KEYS[7] the address's counter of failed entries alone.
 * ARGV[1] the count that refuses the address, or '' when the limit is off; ARGV[2] its window (ms);
 * ARGV[3] the hold's version; ARGV[4] the claim's time to live (ms); ARGV[5] the probe's (ms);
 * ARGV[6] the budget per second, or '' when off.
 * Returns { why it stopped ('' when it did not), ms until it may retry, probing (1/0), claimed ('1',
 * '0', or '' when not tried), the login generation ('' when not read), reserved (1/0), budgeted
 * (1/0) }.
 */
export const BEGIN_ENTRY = script(
  'beginEntry',
  `${STEPS}
local clean = true
if ARGV[1] ~= '' then
  local taken, left = count(KEYS[1], 0, ARGV[2])
  if taken >= tonumber(ARGV[1]) then return { 'failures', left, 0, '', '', 0, 0 } end
  clean = count(KEYS[7], 0, ARGV[2]) == 0
end
local probing = 0
local _, held = read(KEYS[2])
if held == ARGV[3] then
  local heldMs = redis.call('PTTL', KEYS[2])
  if heldMs > 0 then
    if not clean then return { 'held', heldMs, 0, '', '', 0, 0 } end
    if redis.call('EXISTS', KEYS[5]) == 1 then
      return { 'probed', tonumber(ARGV[5]), 0, '', '', 0, 0 }
    end
    write(KEYS[5], nil, '1', ARGV[5])
    probing = 1
  end
end
local budgeted = 0
if not clean and ARGV[6] ~= '' then
  local spent, left = count(KEYS[6], 1, ${ENTRY_BUDGET_WINDOW_MS})
  if spent > tonumber(ARGV[6]) then
    count(KEYS[6], -1, ${ENTRY_BUDGET_WINDOW_MS})
    return { 'budget', left, 0, '', '', 0, 0 }
  end
  budgeted = 1
end
local reserved = 0
if ARGV[1] ~= '' then
  count(KEYS[1], 1, ARGV[2])
  reserved = 1
end
if redis.call('EXISTS', KEYS[3]) == 1 then return { '', 0, probing, '0', '', reserved, budgeted } end
write(KEYS[3], nil, '1', ARGV[4])
local _, generation = read(KEYS[4])
return { '', 0, probing, '1', generation or '0', reserved, budgeted }
`,
);

/**
 * A new login's writes after its code exchange (docs/engine.md, "A new login's writes").
 * KEYS[1] the player's index; KEYS[2] the player's log-out generation; KEYS[3] the record; KEYS[4]
 * the address's counter (unused when ARGV[7] is ''); KEYS[5] the new session (unused when ARGV[9]
 * is ''); KEYS[6] the session replaced (unused when ARGV[11] is '').
 * ARGV[1] expiry of the record (epoch ms); ARGV[2] session key; ARGV[3] now (epoch ms); ARGV[4] the
 * login generation read before the code exchange; ARGV[5] the record's value; ARGV[6] its time to
 * live (ms); ARGV[7] '-1' to give a count back, else ''; ARGV[8] the counter's window (ms);
 * ARGV[9] the session's value, or '' when the session is not written here; ARGV[10] its time to
 * live in seconds (0 or less: deleted, as the session store's own write does); ARGV[11] '1' to
 * delete the replaced session, else ''; ARGV[12] the logins an index keeps.
 * Returns { 1, the sessions whose logins the index had no more room for } when written; 0 when a
 * record exists already or the player was logged out since ARGV[4] (then neither the count nor the
 * session is touched, and the replaced session is gone).
 */
export const PUT_NEW_LOGIN = script(
  'putNewLogin',
  `${STEPS}
if ARGV[11] == '1' then redis.call('DEL', KEYS[6]) end
local _, loggedOutAt = read(KEYS[2])
if (tonumber(loggedOutAt) or 0) > (tonumber(ARGV[4]) or 0) then return 0 end
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
write(KEYS[3], nil, ARGV[5], ARGV[6])
local ended = index(KEYS[1], ARGV[2], tonumber(ARGV[1]), tonumber(ARGV[3]), tonumber(ARGV[12]))
if ARGV[7] == '-1' then count(KEYS[4], -1, ARGV[8]) end
if ARGV[9] ~= '' then
  if tonumber(ARGV[10]) > 0 then
    redis.call('SET', KEYS[5], ARGV[9], 'EX', ARGV[10])
  else
    redis.call('DEL', KEYS[5])
  end
end
return { 1, unpack(ended) }
`,
);
