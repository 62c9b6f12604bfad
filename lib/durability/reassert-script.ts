// The one script of the durability through a failover (docs/durability.md).
import { script } from '../redis/lua-script';

/**
 * Writes a refreshed record again after a failover (docs/durability.md): the promoted replica may
 * hold a version it replaced (ARGV[1] is the oldest of them: refreshes may have followed each other
 * in this process while the primary was away), whose refresh token the platform has retired.
 * Written only over those versions; a record already at the new version is left as it is, and
 * anything else (absent: deleted; logged in again; a newer record) wins.
 * KEYS[1] record key; ARGV[1] the oldest replaced version; ARGV[2] the new version; ARGV[3] the
 * stored value (`<new version>|<value>`); ARGV[4] time to live in milliseconds. Returns 1 when written, 2 when already there,
 * else 0.
 */
export const REASSERT_RECORD = script(
  'reassertRecord',
  `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local version = tonumber(string.match(current, '^(%d+)|'))
local newer = tonumber(ARGV[2])
if version == newer then return 2 end
if not version or version < tonumber(ARGV[1]) or version > newer then return 0 end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
return 1
`,
);
