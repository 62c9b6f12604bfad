// Section "cluster" (issue #44): request-cost and invalidation again on a Redis Cluster of 3
// masters without replicas, and the Redis commands a logged-in request sends there.
import type { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis } from 'ioredis';
import { createCluster } from 'redis';
import { startRedisCluster } from '../../test/helpers/redis-cluster';
import type { ClientChoice } from '../apps/session-stack';
import { hostList } from '../lib/app-process';
import { asPlayer, inFlight, keepAliveAgent, send, type Target } from '../lib/load';
import { table, type BenchContext, type Figure, type SectionResult } from '../lib/report';
import { commandsDuring, type Counts } from '../lib/socket-load';
import { count } from '../lib/stats';
import { runInvalidationOn, type InvalidationRedis } from './invalidation';
import { enterExample, runRequestCost, startVariant, type RequestCostLayout } from './request-cost';

/** Commands per logged-in request: none, to within the noise of the background's timers. */
const COMMANDS_PER_REQUEST_TARGET = 0.01;
/** The idle window is at least this long (ms): the background's rate, from enough of its beats. */
const MIN_IDLE_MS = 3000;
const BURST_CONNECTIONS = 8;
/** `requests` logged-in GET /api/me, BURST_CONNECTIONS at a time; throws unless all are 200. */
async function burstOf(agent: Agent, target: Target, requests: number): Promise<void> {
  let failed = 0;
  await inFlight(BURST_CONNECTIONS, async (index) => {
    if (index >= requests) return false;
    if ((await send(agent, target)).status !== 200) failed += 1;
  });
  if (failed > 0) throw new Error(`cluster: ${failed} answers other than 200`);
}

/**
 * The example on the Cluster, logged in and warmed up; every master's INFO commandstats around a
 * burst of `requests` GET /api/me and an idle window as long right after it: the background (the
 * tracking connections' heartbeats, the client's own checks) runs in both alike.
 */
async function commandsPerRequest(
  ctx: BenchContext,
  client: ClientChoice,
  layout: RequestCostLayout,
  masters: readonly Redis[],
): Promise<SectionResult> {
  const requests = ctx.quick ? 5000 : 20_000;
  const label = `${client}, cluster`;
  const app = await startVariant(ctx, 'example', client, layout);
  const agent = keepAliveAgent(BURST_CONNECTIONS);
  try {
    const cookie = await enterExample(app);
    const target = asPlayer(app.port, cookie);
    const first = await send(agent, target);
    if (first.status !== 200) throw new Error(`cluster: GET /api/me answered ${first.status}`);
    ctx.log(`cluster (${client}): commands per request, warm-up then ${count(requests)} requests`);
    await burstOf(agent, target, Math.min(requests, 1000));
    // Whatever the warm-up's last answers set going (a touch written behind) has landed.
    await sleep(200);
    const { counts: burst, ms: burstMs } = await commandsDuring(masters, () =>
      burstOf(agent, target, requests),
    );
    const during = () => sleep(Math.max(burstMs, MIN_IDLE_MS));
    const { counts: idleCounts, ms: idleMs } = await commandsDuring(masters, during);
    // The background's calls over a window as long as the burst.
    const idle: Counts = Object.fromEntries(
      Object.entries(idleCounts).map(([name, calls]) => [name, (calls * burstMs) / idleMs]),
    );
    const names = [...new Set([...Object.keys(burst), ...Object.keys(idle)])].sort();
    const added = (name: string): number => (burst[name] ?? 0) - (idle[name] ?? 0);
    const sent = names.reduce((sum, name) => sum + added(name), 0);
    const perRequest = Math.max(0, sent) / requests;
    /** A command scales with requests when the burst ran it at least once per 100 requests more. */
    const scaling = names.filter((name) => added(name) >= requests / 100);
    const describe = (delta: Counts): string =>
      names
        .filter((name) => delta[name] !== undefined)
        .map((name) => `${name} ${delta[name]!.toFixed(Number.isInteger(delta[name]) ? 0 : 1)}`)
        .join(', ') || 'none';
    const figure: Figure = {
      name: `commands (${label}): Redis commands per logged-in GET /api/me with a fresh token, the example on 3 masters (INFO commandstats, burst − idle)`,
      measured:
        `${perRequest.toFixed(4)} per request over ${count(requests)} requests; ` +
        `burst (${(burstMs / 1000).toFixed(1)} s): ${describe(burst)}; idle, scaled to as long: ${describe(idle)}; ` +
        `scaling with requests: ${scaling.length === 0 ? 'none' : scaling.join(', ')}`,
      target: `≤ ${COMMANDS_PER_REQUEST_TARGET} (none)`,
      met: perRequest <= COMMANDS_PER_REQUEST_TARGET,
    };
    const markdown = [
      `## commands (${label}): what a logged-in request sends to the Cluster`,
      '',
      `The example on the Cluster, one player logged in, warmed up with ${count(Math.min(requests, 1000))} requests; INFO commandstats of the 3 masters summed before and after ${count(requests)} GET /api/me (${BURST_CONNECTIONS} at a time, ${(burstMs / 1000).toFixed(1)} s) and after an idle window (${(idleMs / 1000).toFixed(1)} s), its counts scaled to the burst's length: burst − idle is what the requests sent (bench/README.md). A command "scales with requests" when the burst ran it at least once per 100 requests more than the idle window.`,
      '',
      ...table(
        `command | burst (${count(requests)} requests) | idle window (scaled to the burst) | burst − idle | per request`,
        names.map((name) => [
          name,
          count(burst[name] ?? 0),
          (idle[name] ?? 0).toFixed(1),
          added(name).toFixed(1),
          (added(name) / requests).toFixed(4),
        ]),
      ),
    ];
    if (names.length === 0) markdown.push('', 'No command ran in either window.');
    return { figures: [figure], markdown };
  } finally {
    agent.destroy();
    await app.stop();
  }
}

export async function runCluster(
  ctx: BenchContext,
  clients: readonly ClientChoice[],
): Promise<SectionResult[]> {
  const cluster = await startRedisCluster(3);
  const nodes = hostList(cluster.nodes);
  ctx.log(`cluster: 3 masters up (${nodes})`);
  const masters = cluster.servers.map(({ url }) => new Redis(url, { maxRetriesPerRequest: 1 }));
  const driver = new Cluster(cluster.nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
  const layout: RequestCostLayout = { name: 'cluster', nodes };
  const results: SectionResult[] = [];
  try {
    for (const client of clients) {
      results.push(await runRequestCost(ctx, client, layout));
      results.push(await commandsPerRequest(ctx, client, layout, masters));
      const nodeRedis: InvalidationRedis['nodeRedis'] = () =>
        createCluster({ rootNodes: cluster.nodes.map((socket) => ({ socket })) });
      const env = { REDIS_URL: '', REDIS_CLUSTER_NODES: nodes };
      results.push(
        await runInvalidationOn(ctx, { name: 'cluster', env, driver, client, nodeRedis }),
      );
    }
  } finally {
    driver.disconnect();
    for (const master of masters) master.disconnect();
    await cluster.stop();
  }
  return results;
}
