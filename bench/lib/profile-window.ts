// Profiles an app process over one load window: starts V8's CPU profiler in the process, runs the
// load, stops it and keeps the .cpuprofile in a temporary folder (openable in Chrome DevTools).
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarizeProfile, type ProfileSummary } from './cpu-profile';
import { send, type LoadResult } from './load';

/** Where this run keeps its profiles. */
export const PROFILE_DIR = join(tmpdir(), `epl-bench-profiles-${process.pid}`);

/** Runs `load` against the process on `port` with the profiler on; resolves the load and the profile. */
export async function profileWindow(
  agent: Agent,
  port: number,
  name: string,
  load: () => Promise<LoadResult>,
): Promise<{ load: LoadResult; profile: ProfileSummary; file: string }> {
  const started = await send(agent, { port, path: '/bench/profile/start' });
  if (started.status !== 204) throw new Error(`could not start the profiler (${started.status})`);
  const result = await load();
  const stopped = await send(agent, { port, path: '/bench/profile/stop' }, true);
  if (stopped.status !== 200) throw new Error(`could not stop the profiler (${stopped.status})`);
  mkdirSync(PROFILE_DIR, { recursive: true });
  const file = join(PROFILE_DIR, `${name}.cpuprofile`);
  writeFileSync(file, stopped.body);
  return { load: result, profile: summarizeProfile(file, result.latencies.length), file };
}
