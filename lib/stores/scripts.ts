// The Lua scripts of RedisTokenStore. Most touch one key, so on Redis Cluster they run on the node
// owning that key's slot; PUT_LOGIN and BEGIN_ENTRY touch several and are sent only where every key
// is on one server. A stored record starts with `<version>|` (see record-codec.ts), which is
// what lets a script compare versions without decrypting anything.
import { createHash } from 'node:crypto';

/** A script with its SHA-1, computed once, for EVALSHA. */
export interface LuaScript {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

/** A script named `name`, its SHA-1 computed once. */
export const script = (name: string, source: string): LuaScript => ({
  name,
  source,
  sha: createHash('sha1').update(source).digest('hex'),
});

/**
 * Lua of a compare-and-set write, shared by the scripts that make one: the record at KEYS[key];
 * from ARGV[arg] on, `<expected version>|` (or '' when no record may exist), the new stored value
 * and its time to live in milliseconds. Returns 1 when written, 0 when the stored version differs.
 */
function compareAndSet(key: number, arg: number): string {
  return `local current = redis.call('GET', KEYS[${key}])
local expected = ARGV[${arg}]
if expected == '' then
  if current then return 0 end
elseif not current or string.sub(current, 1, #expected) ~= expected then
  return 0
end
redis.call('SET', KEYS[${key}], ARGV[${arg + 1}], 'PX', ARGV[${arg + 2}])
return 1
`;
}

/**
 * Lua that adds a session to its player's index (a sorted set scored by record expiry), drops
 * members that expired, and keeps the index alive as long as its longest-lived member: the index
 * at KEYS[key]; from ARGV[arg] on, the record's expiry (epoch ms), the session hash, now (epoch ms).
 */
function indexSession(key: number, arg: number): string {
  return `redis.call('ZADD', KEYS[${key}], ARGV[${arg}], ARGV[${arg + 1}])
redis.call('ZREMRANGEBYSCORE', KEYS[${key}], '-inf', ARGV[${arg + 2}])
local last = redis.call('ZRANGE', KEYS[${key}], -1, -1, 'WITHSCORES')
if last[2] then redis.call('PEXPIREAT', KEYS[${key}], last[2]) end`;
}

/**
 * Compare-and-set write of a record.
 * KEYS[1] record key; ARGV[1] `<expected version>|`, or '' when no record may exist;
 * ARGV[2] the new stored value; ARGV[3] time to live in milliseconds.
 * Returns 1 when written, 0 when the stored version differs (another writer got there first).
 */
export const PUT_IF_VERSION = script(
  'putIfVersion',
  `
${compareAndSet(1, 1)}`,
);

/**
 * A record and the milliseconds it has left, in one command: a cache miss costs Redis one command
 * and one answer, and this process one wake-up, as a plain GET does.
 * KEYS[1] record key. Returns { stored value or nil, PTTL (-2: no key, -1: no expiry) }.
 */
export const READ_WITH_TTL = script(
  'readWithTtl',
  `
return { redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]) }
`,
);

/**
 * Deletes a record only while it still has the expected version, so a logout or a rejected refresh
 * cannot remove tokens a concurrent writer has just replaced.
 * KEYS[1] record key; ARGV[1] `<expected version>|`. Returns 1 when deleted, else 0.
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
 * Releases a lock only if the caller still owns it: a holder whose lock expired must not release
 * the lock a later owner took.
 * KEYS[1] lock key; ARGV[1] the owner value. Returns 1 when released, else 0.
 */
export const RELEASE_IF_OWNER = script(
  'releaseIfOwner',
  `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`,
);

/**
 * Gives a lock more time only if the caller still owns it: a living holder keeps its short lock,
 * a dead one's lock frees within one lifetime.
 * KEYS[1] lock key; ARGV[1] the owner value; ARGV[2] time to live in milliseconds.
 * Returns 1 when extended, else 0.
 */
export const EXTEND_IF_OWNER = script(
  'extendIfOwner',
  `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`,
);

/**
 * Lua that sets `held` (declared by the caller) to the milliseconds left of a hold on one version
 * of a record, leaving it 0 when there is none (or the hold is on another version: the record has
 * changed since): the hold at KEYS[key]; ARGV[arg] the version.
 */
function heldBack(key: number, arg: number): string {
  return `if redis.call('GET', KEYS[${key}]) == ARGV[${arg}] then
  local ms = redis.call('PTTL', KEYS[${key}])
  if ms > 0 then held = ms end
end`;
}

/**
 * Milliseconds left of a hold on refreshing one version of a record; 0 when none.
 * KEYS[1] hold key; ARGV[1] the record version.
 */
export const HELD_BACK_MS = script(
  'heldBackMs',
  `
local held = 0
${heldBack(1, 1)}
return held
`,
);

/**
 * Adds a session to its player's index (a sorted set scored by record expiry), drops members that
 * expired, and keeps the index itself alive exactly as long as its longest-lived member.
 * KEYS[1] index key; KEYS[2] the player's logout generation (same slot);
 * ARGV[1] expiry of the session's record (epoch ms); ARGV[2] session hash; ARGV[3] now (epoch ms).
 * Returns the player's logout generation ('0' when none), which a login compares after writing.
 */
export const INDEX_SESSION = script(
  'indexSession',
  `
${indexSession(1, 1)}
return redis.call('GET', KEYS[2]) or '0'
`,
);

/**
 * A fresh or compare-and-set login write in one command, where every key is on one server
 * (standalone or Sentinel): {@link INDEX_SESSION}, then the log-out check, then
 * {@link PUT_IF_VERSION}, atomically, so no logoutPlayer() can run between them (on a Cluster the
 * keys live in different slots and RedisTokenStore makes the three calls, checking again after).
 * KEYS[1] index key; KEYS[2] the player's logout generation; KEYS[3] record key;
 * ARGV[1] expiry of the record (epoch ms); ARGV[2] session hash; ARGV[3] now (epoch ms);
 * ARGV[4] the login generation read before the code exchange, or '' when none;
 * ARGV[5] `<expected version>|` or ''; ARGV[6] the new stored value; ARGV[7] time to live (ms).
 * Returns 1 when written; 0 when the stored version differs or the player was logged out since
 * ARGV[4] (the index entry stays: a member whose record is missing is pruned later).
 */
export const PUT_LOGIN = script(
  'putLogin',
  `
${indexSession(1, 1)}
if ARGV[4] ~= '' then
  local loggedOutAt = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
  if loggedOutAt > (tonumber(ARGV[4]) or 0) then return 0 end
end
${compareAndSet(3, 5)}`,
);

/**
 * Records the store-wide log-out generation at which a player was logged out everywhere, keeping
 * the highest (two concurrent log-outs may arrive in either order).
 * KEYS[1] the player's log-out key; ARGV[1] the generation; ARGV[2] time to live in milliseconds.
 */
export const RAISE_LOGOUT = script(
  'raiseLogout',
  `
local current = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if tonumber(ARGV[1]) > current then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
`,
);

/**
 * Lua of a fixed-window counter that sets `count` and `left` (declared by the caller): adds
 * ARGV[arg] ('1', '0' to only read, '-1' to give back a count of the open window) to the counter
 * at KEYS[key] and opens the window (ARGV[arg + 1] ms) at the first count, so the key is gone when
 * the window ends, or when its counts are all given back; `left` is the milliseconds left in the
 * window (0 when none).
 */
function countInWindow(key: number, arg: number): string {
  return `if ARGV[${arg}] == '1' then
  count = redis.call('INCR', KEYS[${key}])
  if count == 1 then redis.call('PEXPIRE', KEYS[${key}], ARGV[${arg + 1}]) end
elseif ARGV[${arg}] == '-1' then
  -- No GET here: a give-back reads no value (Redis's command counts tell reads by GET apart).
  count = 0
  if redis.call('EXISTS', KEYS[${key}]) == 1 then
    count = redis.call('DECR', KEYS[${key}])
    if count <= 0 then
      redis.call('DEL', KEYS[${key}])
      count = 0
    end
  end
else
  count = tonumber(redis.call('GET', KEYS[${key}]) or '0') or 0
end
left = redis.call('PTTL', KEYS[${key}])
if left == -1 then
  redis.call('PEXPIRE', KEYS[${key}], ARGV[${arg + 1}])
  left = tonumber(ARGV[${arg + 1}])
end
if left < 0 then left = 0 end`;
}

/**
 * A fixed-window counter (see countInWindow above).
 * KEYS[1] counter key; ARGV[1] the increment; ARGV[2] the window (ms).
 * Returns { count, milliseconds left in the window (0 when none) }.
 */
export const COUNT_IN_WINDOW = script(
  'countInWindow',
  `
local count, left = 0, 0
${countInWindow(1, 1)}
return { count, left }
`,
);

/**
 * An entry's checks before its code exchange, in one command where every key is on one server
 * (TokenStore `entries`; the steps and answers of core/entry-begin.ts): the client address's count,
 * the hold on code exchanges (an address with no failed entry may probe through it, one per probe
 * time to live), the budget of addresses with failed entries, the address's reservation, the
 * code's claim, the login generation — each only when the one before let the entry on.
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
  `
local function leftOf(key)
  local ms = redis.call('PTTL', key)
  if ms < 1 then return 1 end
  return ms
end
local clean = true
if ARGV[1] ~= '' then
  local count = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
  if count >= tonumber(ARGV[1]) then return { 'failures', leftOf(KEYS[1]), 0, '', '', 0 } end
  clean = (tonumber(redis.call('GET', KEYS[7]) or '0') or 0) == 0
end
local probing = 0
local held = 0
${heldBack(2, 3)}
if held > 0 then
  if not clean then return { 'held', held, 0, '', '', 0 } end
  if not redis.call('SET', KEYS[5], '1', 'PX', ARGV[5], 'NX') then
    return { 'probed', leftOf(KEYS[5]), 0, '', '', 0 }
  end
  probing = 1
end
local budgeted = 0
if not clean and ARGV[6] ~= '' then
  local spent = redis.call('INCR', KEYS[6])
  if spent == 1 then redis.call('PEXPIRE', KEYS[6], 1000) end
  if spent > tonumber(ARGV[6]) then
    redis.call('DECR', KEYS[6])
    return { 'budget', leftOf(KEYS[6]), 0, '', '', 0, 0 }
  end
  budgeted = 1
end
local reserved = 0
if ARGV[1] ~= '' then
  if redis.call('INCR', KEYS[1]) == 1 or redis.call('PTTL', KEYS[1]) == -1 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  end
  reserved = 1
end
if not redis.call('SET', KEYS[3], '1', 'PX', ARGV[4], 'NX') then
  return { '', 0, probing, '0', '', reserved, budgeted }
end
return { '', 0, probing, '1', redis.call('GET', KEYS[4]) or '0', reserved, budgeted }
`,
);

/**
 * A new login's writes after its code exchange, in one command where every key is on one server
 * (TokenStore `logins`): the session it replaces deleted (express-session's `regenerate`), then
 * {@link PUT_LOGIN}'s index, log-out check and write of a fresh record, and only when the record
 * was written, the entry's count given back and the new session written. What were four round
 * trips (the DEL, the record, the session, the give-back) is one.
 * KEYS[1] index key; KEYS[2] the player's logout generation; KEYS[3] record key; KEYS[4] the
 * address's counter (unused when ARGV[7] is ''); KEYS[5] the new session (unused when ARGV[9] is
 * ''); KEYS[6] the session replaced (unused when ARGV[11] is '').
 * ARGV[1] expiry of the record (epoch ms); ARGV[2] session hash; ARGV[3] now (epoch ms);
 * ARGV[4] the login generation read before the code exchange; ARGV[5] the new stored value;
 * ARGV[6] its time to live (ms); ARGV[7] '-1' to give a count back, else ''; ARGV[8] the
 * counter's window (ms); ARGV[9] the session's value, or '' when the session is not written here;
 * ARGV[10] its time to live in seconds (0 or less: deleted, as the session store's own write
 * does); ARGV[11] '1' to delete the replaced session, else ''.
 * Returns 1 when written; 0 when a record exists already or the player was logged out since
 * ARGV[4] (then neither the count nor the session is touched, and the replaced session is gone).
 */
export const PUT_NEW_LOGIN = script(
  'putNewLogin',
  `
if ARGV[11] == '1' then redis.call('DEL', KEYS[6]) end
${indexSession(1, 1)}
local loggedOutAt = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if loggedOutAt > (tonumber(ARGV[4]) or 0) then return 0 end
if not redis.call('SET', KEYS[3], ARGV[5], 'PX', ARGV[6], 'NX') then return 0 end
if ARGV[7] == '-1' then
  local count, left = 0, 0
${countInWindow(4, 7)}
end
if ARGV[9] ~= '' then
  if tonumber(ARGV[10]) > 0 then
    redis.call('SET', KEYS[5], ARGV[9], 'EX', ARGV[10])
  else
    redis.call('DEL', KEYS[5])
  end
end
return 1
`,
);
