// Reads a V8 .cpuprofile written by `node --cpu-prof` and reduces it to what RESULTS.md shows:
// self time by area (this package, each dependency, Node internals, GC) and the top frames.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

/** Self time of one area or frame, in milliseconds and microseconds per request. */
export interface ProfileShare {
  name: string;
  ms: number;
  usPerRequest: number;
}

/** A profile reduced for the results. */
export interface ProfileSummary {
  /** Sampled time with the process busy (idle excluded), in milliseconds. */
  busyMs: number;
  areas: ProfileShare[];
  /** Every frame with self time (GC, idle and "program" excluded), most time first. */
  frames: (ProfileShare & { area: string })[];
  /** Time by cause, each frame counted with what called it (see {@link CAUSES}). */
  causes: ProfileShare[];
}

/** The causes time is charged to: the Redis client and all it calls, the package's own code, GC, the rest. */
export const CAUSES = {
  redis: 'Redis client: commands written, replies parsed (ioredis and what it calls)',
  package: 'package code (dist/, its build) and what it calls, Redis and next() excluded',
  gc: 'garbage collector',
  other: 'everything else (http, express, express-session, …)',
} as const;

const REDIS_CLIENT_AREAS = new Set([
  'ioredis',
  'redis-parser',
  'denque',
  'standard-as-callback',
  'cluster-key-slot',
]);
const PACKAGE_AREA = 'express-platform-login (dist/)';

/** The cause of a frame, from its own area and its caller's cause. */
function causeOf(area: string, callerCause: keyof typeof CAUSES): keyof typeof CAUSES {
  if (area === 'GC') return 'gc';
  if (REDIS_CLIENT_AREAS.has(area) || callerCause === 'redis') return 'redis';
  if (area === PACKAGE_AREA) return 'package';
  // next() from the middleware runs the rest of the app: that is not the package's time.
  if (area === 'router' || area === 'express') return 'other';
  return callerCause;
}

const ROOT = join(__dirname, '..', '..');

/** Which part of the process a frame belongs to. */
function areaOf(url: string, functionName: string): string {
  if (url === '') {
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(program)') return 'V8 (program)';
    return 'V8 builtins';
  }
  const path = url.startsWith('file://') ? new URL(url).pathname : url;
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
  if (module) return module[1]!;
  if (path.startsWith('node:')) return 'node internals';
  const inRepo = relative(ROOT, path);
  // The app processes run the build (built-package.ts); lib/ for a profile of a source run.
  if (inRepo.startsWith('dist/') || inRepo.startsWith('lib/')) return PACKAGE_AREA;
  if (inRepo.startsWith('bench/')) return 'bench app';
  if (inRepo.startsWith('example-app/')) return 'example app';
  return 'other';
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const path = url.startsWith('file://') ? new URL(url).pathname : url;
  const shortPath = path.includes('node_modules/')
    ? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)
    : path.startsWith('/')
      ? relative(ROOT, path)
      : path;
  const where = shortPath === '' ? '' : ` ${shortPath}:${lineNumber + 1}`;
  return `${functionName === '' ? '(anonymous)' : functionName}${where}`;
}

/** Summarises the profile at `file`; `requests` is how many requests the process served meanwhile. */
export function summarizeProfile(file: string, requests: number): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: ProfileNode[];
    startTime: number;
    endTime: number;
  };
  const samples = profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
  const msPerSample = (profile.endTime - profile.startTime) / 1000 / Math.max(1, samples);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const causes = new Map<keyof typeof CAUSES, number>();
  const charge = (node: ProfileNode, callerCause: keyof typeof CAUSES): void => {
    const cause = causeOf(areaOf(node.callFrame.url, node.callFrame.functionName), callerCause);
    const ms = (node.hitCount ?? 0) * msPerSample;
    if (ms > 0 && node.callFrame.functionName !== '(idle)')
      causes.set(cause, (causes.get(cause) ?? 0) + ms);
    for (const child of node.children ?? []) charge(byId.get(child)!, cause);
  };
  charge(profile.nodes[0]!, 'other');
  const areas = new Map<string, number>();
  const frames = new Map<string, { ms: number; area: string }>();
  for (const node of profile.nodes) {
    const ms = (node.hitCount ?? 0) * msPerSample;
    if (ms === 0) continue;
    const area = areaOf(node.callFrame.url, node.callFrame.functionName);
    areas.set(area, (areas.get(area) ?? 0) + ms);
    if (area === 'idle' || area === 'V8 (program)' || area === 'GC') continue;
    const name = frameName(node);
    const frame = frames.get(name) ?? { ms: 0, area };
    frame.ms += ms;
    frames.set(name, frame);
  }
  const per = (ms: number): number => (ms * 1000) / Math.max(1, requests);
  const busyMs = [...areas.entries()]
    .filter(([name]) => name !== 'idle')
    .reduce((sum, [, ms]) => sum + ms, 0);
  return {
    busyMs,
    areas: [...areas.entries()]
      .filter(([name]) => name !== 'idle')
      .map(([name, ms]) => ({ name, ms, usPerRequest: per(ms) }))
      .sort((a, b) => b.ms - a.ms),
    causes: (Object.keys(CAUSES) as (keyof typeof CAUSES)[]).map((cause) => ({
      name: CAUSES[cause],
      ms: causes.get(cause) ?? 0,
      usPerRequest: per(causes.get(cause) ?? 0),
    })),
    frames: [...frames.entries()]
      .map(([name, { ms, area }]) => ({ name, area, ms, usPerRequest: per(ms) }))
      .sort((a, b) => b.ms - a.ms),
  };
}

/** Several windows of one process as one: time summed, per request over all their requests. */
export function mergeProfiles(
  windows: readonly { profile: ProfileSummary; requests: number }[],
): ProfileSummary {
  const requests = windows.reduce((sum, window) => sum + window.requests, 0);
  const per = (ms: number): number => (ms * 1000) / Math.max(1, requests);
  const sum = <T extends ProfileShare>(pick: (summary: ProfileSummary) => T[]): T[] => {
    const byName = new Map<string, T>();
    for (const { profile } of windows) {
      for (const share of pick(profile)) {
        const seen = byName.get(share.name);
        byName.set(
          share.name,
          seen === undefined ? { ...share } : { ...seen, ms: seen.ms + share.ms },
        );
      }
    }
    return [...byName.values()]
      .map((share) => ({ ...share, usPerRequest: per(share.ms) }))
      .sort((a, b) => b.ms - a.ms);
  };
  return {
    busyMs: windows.reduce((total, window) => total + window.profile.busyMs, 0),
    areas: sum((summary) => summary.areas),
    frames: sum((summary) => summary.frames),
    causes: (Object.keys(CAUSES) as (keyof typeof CAUSES)[]).map((cause) => {
      const ms = windows.reduce(
        (total, { profile }) =>
          total + (profile.causes.find((share) => share.name === CAUSES[cause])?.ms ?? 0),
        0,
      );
      return { name: CAUSES[cause], ms, usPerRequest: per(ms) };
    }),
  };
}
