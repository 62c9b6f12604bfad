// A Lua script as both clients send it: by SHA-1 (EVALSHA), loaded again on NOSCRIPT.
import { createHash } from 'node:crypto';

/** A script with its SHA-1, computed once, for EVALSHA. */
export interface LuaScript {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

export const script = (name: string, source: string): LuaScript => ({
  name,
  source,
  sha: createHash('sha1').update(source).digest('hex'),
});
