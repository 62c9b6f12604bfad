// Failover test beds on loopback: a Sentinel group (a primary, replicas, three sentinels) and a
// Redis Cluster with replicas, where each replica can lag its master by a set delay. A test kills a
// master (SIGKILL), waits for the promotion and sees what the new master kept and what it lost: the
// writes still held in the delay when the master died never reach the replica.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from './free-port';
import { startRedisServer, type TestRedisServer } from './redis-server';
import { clusterNodeArgs } from './redis-cluster';
import { startSentinel } from './redis-sentinel';
import { startReplicationDelayProxy, type ReplicationDelayProxy } from './replication-delay-proxy';
import { startReplicationDelayProxyProcess } from './replication-delay-proxy-process';

const HOST = '127.0.0.1';

export interface Address {
  host: string;
  port: number;
}

// ---------------------------------------------------------------------------------------------
// Where the delaying proxies run

/** Starts a bed's delaying proxies; closed after them. */
interface ProxyHost {
  start(targetPort: number): Promise<ReplicationDelayProxy>;
  /** Resolves once every setDelay() called so far has taken effect. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** In this process (the default), or all of the bed's in one child process of their own. */
function proxyHost(inChildProcess = false): ProxyHost {
  if (inChildProcess) return startReplicationDelayProxyProcess();
  return {
    start: (targetPort) => startReplicationDelayProxy(targetPort),
    // setDelay() takes effect at once here; each proxy is closed by the bed.
    settled: async () => undefined,
    close: async () => undefined,
  };
}

/** Stops what the bed started, then the proxies' host (a child process may hold them). */
async function stopBed(stops: Array<() => Promise<void>>, proxies: ProxyHost): Promise<void> {
  try {
    await stopAll(stops.splice(0));
  } finally {
    await proxies.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Talking to the servers

/** One command on a fresh connection. */
async function command(
  port: number,
  name: string,
  ...args: Array<string | number>
): Promise<unknown> {
  const client = new Redis({
    host: HOST,
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1_000,
    enableReadyCheck: false,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.call(name, ...args);
  } finally {
    // A client that could not connect has ended: disconnect() would arm ioredis's 2 s timer on its
    // closed socket, and the last of those holds Jest's worker past the end of the run.
    if (client.status !== 'end') client.disconnect();
  }
}

/** For polling: undefined if the server does not answer (e.g. it is dead or still starting). */
const ask = (port: number, name: string, ...args: Array<string | number>): Promise<unknown> =>
  command(port, name, ...args).catch(() => undefined);

async function info(port: number, section: string): Promise<string> {
  return String((await ask(port, 'INFO', section)) ?? '');
}

const infoField = (text: string, field: string): string | undefined =>
  new RegExp(`^${field}:(.*)\\r?$`, 'm').exec(text)?.[1];

async function role(port: number): Promise<string | undefined> {
  const reply = (await ask(port, 'ROLE')) as unknown[] | undefined;
  return reply ? String(reply[0]) : undefined;
}

/** Polls `check` every 50 ms until it gives a value; rejects naming `what` after `timeoutMs`. */
async function pollFor<T>(
  check: () => Promise<T | undefined>,
  what: string,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** Whether a replica has its link up and has caught up with its master's offset. */
async function inSync(masterPort: number, replicaPort: number): Promise<boolean> {
  const [master, replica] = await Promise.all([
    info(masterPort, 'replication'),
    info(replicaPort, 'replication'),
  ]);
  return (
    infoField(replica, 'master_link_status') === 'up' &&
    infoField(replica, 'slave_repl_offset') === infoField(master, 'master_repl_offset')
  );
}

/** Polls until each [master, replica] pair is in sync. */
async function replicasInSync(
  pairs: Array<[masterPort: number, replicaPort: number]>,
  timeoutMs: number,
): Promise<void> {
  await pollFor(
    async () =>
      (await Promise.all(pairs.map(([m, r]) => inSync(m, r)))).every(Boolean) ? true : undefined,
    'the replicas to catch up with their masters',
    timeoutMs,
  );
}

// Diskless full syncs start at once (the default waits 5 s for more replicas to join).
const REPLICATION_ARGS = ['--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0'];

/** Stops everything given, whatever fails, and throws the first failure. */
async function stopAll(stops: Array<() => Promise<void>>): Promise<void> {
  const results = await Promise.allSettled(stops.map((stop) => stop()));
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

// ---------------------------------------------------------------------------------------------
// Sentinel bed

export interface SentinelBedOptions {
  /** How long each replica lags its primary (ms). Default 0. */
  replicationDelayMs?: number;
  /** Replicas of the primary, each through the delaying proxy. Default 1. */
  replicas?: number;
  /**
   * Runs the delaying proxies in a child process of their own (one for the bed) rather than in
   * this one, so they take nothing of this process's event loop. Default false.
   */
  proxiesInChildProcess?: boolean;
}

export interface SentinelBed {
  /** For `new Redis({ sentinels, name: masterName })`. */
  masterName: string;
  sentinels: Address[];
  /** The first master; the bed does not restart it after killPrimary(). */
  primary: TestRedisServer;
  /**
   * Replicas of the primary through the delaying proxy. After a failover the sentinels point the
   * others at the promoted one directly: from then on they do not lag.
   */
  replicas: TestRedisServer[];
  /** Changes the replicas' lag (ms) for what the primary sends from now on. */
  setReplicationDelay(ms: number): void;
  /** Resolves once every replica has all the primary sent so far (before a failover). */
  caughtUp(timeoutMs?: number): Promise<void>;
  /** SIGKILLs the current master (the primary, or the replica promoted after it). */
  killPrimary(): Promise<void>;
  /** Resolves the new master once every sentinel names it and it answers ROLE master. */
  waitForPromotion(timeoutMs?: number): Promise<Address>;
  stop(): Promise<void>;
}

const SENTINEL_BED_MASTER_NAME = 'epl-failover';
// Long, so the sentinels leave the replicas on the proxy: they re-point a replica that replicates
// from another address than the master's only after failover-timeout. It also spaces failover
// attempts (2 × failover-timeout), hence one slow sentinel below so an election cannot split.
const FAILOVER_TIMEOUT_MS = 180_000;
const DOWN_AFTER_MS = 1_000;
// The third sentinel only votes: it does not see the master down within a test, so it never stands
// for leader, and of the two that do one always gets its vote (2 of 3).
const WITNESS_DOWN_AFTER_MS = 60_000;

const LINKING_PING_PERIOD_MS = 100;
// Once linked: a dead master is seen sooner than with the 1 s default (a sentinel pings, and tries a
// lost link again, every ping period), while a failover still finds the replica's INFO fresh: it
// takes a replica only if its INFO is at most five ping periods old (2.5 s), and INFO comes every
// INFO_PERIOD_MS (not every 10 s before the master is found down). A promotion is seen about a
// second sooner. Down-after is unchanged: a master is down after a ping unanswered for 1 s either way.
const PING_PERIOD_MS = 500;
const INFO_PERIOD_MS = 1_000;
// Each sentinel's hello (every 2 s by default) is a PUBLISH on the primary, replicated like a write:
// with three of them the lagging replica is seldom level with its primary, and caughtUp() waits for
// such a moment. A sentinel that takes a new configuration sends its hello at once, whatever this.
const HELLO_PERIOD_MS = 10_000;

/** Flat [key, value, …] replies of SENTINEL REPLICAS / SENTINELS as objects. */
function records(reply: unknown): Array<Record<string, string>> {
  if (!Array.isArray(reply)) return [];
  return reply.map((flat: string[]) => {
    const record: Record<string, string> = {};
    for (let index = 0; index + 1 < flat.length; index += 2)
      record[flat[index]!] = flat[index + 1]!;
    return record;
  });
}

async function masterAddress(sentinelPort: number, name: string): Promise<Address | undefined> {
  const reply = (await ask(sentinelPort, 'SENTINEL', 'get-master-addr-by-name', name)) as
    string[] | null | undefined;
  return reply ? { host: reply[0]!, port: Number(reply[1]) } : undefined;
}

/** Ready: the sentinel names the master, knows the other sentinels and every replica, all up. */
async function sentinelReady(
  sentinelPort: number,
  name: string,
  masterPort: number,
  peers: number,
  replicaPorts: number[],
): Promise<boolean> {
  const address = await masterAddress(sentinelPort, name);
  if (address?.port !== masterPort) return false;
  const others = records(await ask(sentinelPort, 'SENTINEL', 'SENTINELS', name));
  if (others.length !== peers || others.some((other) => other.flags !== 'sentinel')) return false;
  const replicas = records(await ask(sentinelPort, 'SENTINEL', 'REPLICAS', name));
  return replicaPorts.every((port) =>
    replicas.some(
      (replica) =>
        replica.port === String(port) &&
        replica.flags === 'slave' &&
        replica['master-link-status'] === 'ok',
    ),
  );
}

/**
 * A primary, `replicas` replicas each replicating through a delaying proxy
 * (`replicaof 127.0.0.1 <proxy>`), and three sentinels (quorum 2), all on free loopback ports.
 */
export async function startSentinelBed(options: SentinelBedOptions = {}): Promise<SentinelBed> {
  const name = SENTINEL_BED_MASTER_NAME;
  const proxies = proxyHost(options.proxiesInChildProcess);
  const stops: Array<() => Promise<void>> = [];
  const stop = (): Promise<void> => stopBed(stops, proxies);
  try {
    const primary = await startRedisServer(REPLICATION_ARGS);
    stops.push(() => primary.stop());
    // Undelayed until the replicas are in sync: the handshake takes several round trips.
    const proxy = await proxies.start(primary.port);
    stops.push(() => proxy.close());
    const replicas = await Promise.all(
      Array.from({ length: options.replicas ?? 1 }, async () => {
        const replica = await startRedisServer([
          ...REPLICATION_ARGS,
          '--replicaof',
          HOST,
          String(proxy.port),
          // The primary lists a replica at the port it reports (its own) and its announced IP, not
          // at the proxy's side of the link: where the sentinels, learning from its INFO, reach it.
          '--replica-announce-ip',
          HOST,
        ]);
        stops.push(() => replica.stop());
        return replica;
      }),
    );
    for (const replica of replicas)
      await pollFor(
        async () => ((await inSync(primary.port, replica.port)) ? true : undefined),
        `replica ${replica.port} to sync with primary ${primary.port}`,
        10_000,
      );

    const ports = [await freePort(), await freePort(), await freePort()];
    const ids = ports.map(() => randomBytes(20).toString('hex'));
    // Each sentinel is told of the others, so none waits for their hello messages (every 2 s).
    await Promise.all(
      ports.map(async (port, index) => {
        const sentinel = await startSentinel(port, [
          `sentinel myid ${ids[index]}`,
          `sentinel monitor ${name} ${HOST} ${primary.port} 2`,
          `sentinel down-after-milliseconds ${name} ${index === 2 ? WITNESS_DOWN_AFTER_MS : DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${name} ${FAILOVER_TIMEOUT_MS}`,
          ...ports
            .map((other, at) => `sentinel known-sentinel ${name} ${HOST} ${other} ${ids[at]}`)
            .filter((_, at) => at !== index),
        ]);
        stops.push(() => sentinel.stop());
        // A sentinel tries a peer again only a ping period after a failed try, and each tried its
        // peers before they listened: a short period links them sooner (Redis 7.0+; set back below).
        await ask(port, 'SENTINEL', 'DEBUG', 'ping-period', LINKING_PING_PERIOD_MS);
      }),
    );
    const replicaPorts = replicas.map((replica) => replica.port);
    await pollFor(
      async () => {
        const ready = await Promise.all(
          ports.map((port) => sentinelReady(port, name, primary.port, 2, replicaPorts)),
        );
        return ready.every(Boolean) ? true : undefined;
      },
      'the sentinels to know the primary, each other and the replicas',
      15_000,
    );
    await Promise.all(
      ports.map((port) =>
        ask(
          port,
          'SENTINEL',
          'DEBUG',
          'ping-period',
          PING_PERIOD_MS,
          'info-period',
          INFO_PERIOD_MS,
          'publish-period',
          HELLO_PERIOD_MS,
        ),
      ),
    );
    proxy.setDelay(options.replicationDelayMs ?? 0);
    await proxies.settled();

    const servers = [primary, ...replicas];
    let masterPort = primary.port;
    return {
      masterName: name,
      sentinels: ports.map((port) => ({ host: HOST, port })),
      primary,
      replicas,
      setReplicationDelay: (ms) => proxy.setDelay(ms),
      caughtUp: (timeoutMs = 15_000) =>
        replicasInSync(
          replicas.map((replica) => [primary.port, replica.port]),
          timeoutMs,
        ),
      async killPrimary() {
        await servers.find((server) => server.port === masterPort)!.kill();
      },
      async waitForPromotion(timeoutMs = 20_000) {
        const address = await pollFor(
          async () => {
            const named = await Promise.all(ports.map((port) => masterAddress(port, name)));
            const first = named[0];
            if (!first || first.port === masterPort) return undefined;
            if (named.some((address) => address?.port !== first.port)) return undefined;
            return (await role(first.port)) === 'master' ? first : undefined;
          },
          `the sentinels to agree on a new master after ${masterPort}`,
          timeoutMs,
        );
        masterPort = address.port;
        return address;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Cluster bed

export interface ClusterBedOptions {
  /** Masters (at least 3 for a failover: a majority of masters must vote). Default 3. */
  masters?: number;
  /** Replicas of each master. Default 1. */
  replicasPerMaster?: number;
  /** How long each replica lags its master (ms). Default 0. */
  replicationDelayMs?: number;
  /**
   * Runs the delaying proxies in a child process of their own (one for the bed) rather than in
   * this one, so they take nothing of this process's event loop: every node announces its proxy's
   * port, so all client traffic to the cluster passes through them. Default false.
   */
  proxiesInChildProcess?: boolean;
}

/** A node of the cluster bed. */
export interface ClusterBedNode extends Address {
  /** `port` is what the cluster announces (the node's proxy); the server listens on server.port. */
  server: TestRedisServer;
  id: string;
  /** Index of the master this node started as or under (its shard). */
  shard: number;
  /** The slots of the shard, first and last. */
  slots: [number, number];
}

export interface ClusterBed {
  /** Start-up nodes for `new Cluster(nodes)`. */
  nodes: Address[];
  /** The masters the cluster started with (masters[i] serves shard i until killed). */
  masters: ClusterBedNode[];
  /** Every replica; `shard` names its master. */
  replicas: ClusterBedNode[];
  /** SIGKILLs the current master of shard `index` and closes its proxy (connections are refused). */
  killMaster(index: number): Promise<void>;
  /** Resolves the new master of shard `index` once every live node sees it and the cluster is ok. */
  waitForPromotion(index: number, timeoutMs?: number): Promise<Address>;
  /** Changes the replicas' lag (ms) for what masters send from now on. */
  setReplicationDelay(ms: number): void;
  /** Resolves once every replica has all its master sent so far (before a failover). */
  caughtUp(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const CLUSTER_SLOTS = 16_384;

interface ClusterProcess {
  server: TestRedisServer;
  proxy: ReplicationDelayProxy;
  busPort: number;
}

/**
 * A cluster node behind its own delaying proxy: the node announces the proxy's port, so clients
 * (undelayed) and replicas (delayed) of this node all come through it; the bus is direct.
 */
async function startClusterProcess(proxies: ProxyHost): Promise<ClusterProcess> {
  const port = await freePort();
  // The bus port must be given: the default (port + 10000) may be taken or beyond 65535.
  const busPort = await freePort();
  const proxy = await proxies.start(port);
  try {
    const server = await startRedisServer(
      [
        ...REPLICATION_ARGS,
        ...clusterNodeArgs(busPort, 1000),
        '--cluster-announce-ip',
        HOST,
        '--cluster-announce-port',
        String(proxy.port),
        '--cluster-announce-bus-port',
        String(busPort),
      ],
      { port },
    );
    return { server, proxy, busPort };
  } catch (error) {
    await proxy.close();
    throw error;
  }
}

/** One node's CLUSTER NODES, by node id: flags and master id. */
type ClusterView = Map<string, { flags: string[]; master: string }>;

async function clusterView(port: number): Promise<ClusterView | undefined> {
  const text = (await ask(port, 'CLUSTER', 'NODES')) as string | undefined;
  if (text === undefined) return undefined;
  const view: ClusterView = new Map();
  for (const line of text.trim().split('\n')) {
    const [id, , flags, master] = line.split(' ');
    view.set(id!, { flags: flags!.split(','), master: master! });
  }
  return view;
}

async function clusterStateOk(port: number): Promise<boolean> {
  return /cluster_state:ok/.test(String((await ask(port, 'CLUSTER', 'INFO')) ?? ''));
}

/**
 * A Redis Cluster of `masters` masters with `replicasPerMaster` replicas each (built by hand:
 * ADDSLOTSRANGE, MEET, REPLICATE), node timeout 1 s, every replica lagging by `replicationDelayMs`.
 */
export async function startClusterBed(options: ClusterBedOptions = {}): Promise<ClusterBed> {
  const masterCount = options.masters ?? 3;
  const perMaster = options.replicasPerMaster ?? 1;
  const proxies = proxyHost(options.proxiesInChildProcess);
  const stops: Array<() => Promise<void>> = [];
  const stop = (): Promise<void> => stopBed(stops, proxies);
  try {
    const processes = await Promise.all(
      Array.from({ length: masterCount * (1 + perMaster) }, async () => {
        const started = await startClusterProcess(proxies);
        stops.push(async () => {
          await started.proxy.close();
          await started.server.stop();
        });
        return started;
      }),
    );
    const ids = await Promise.all(
      processes.map(async ({ server }) => String(await command(server.port, 'CLUSTER', 'MYID'))),
    );
    const nodes: ClusterBedNode[] = processes.map(({ server, proxy }, at) => {
      const shard = at < masterCount ? at : (at - masterCount) % masterCount;
      const first = Math.floor((shard * CLUSTER_SLOTS) / masterCount);
      const last = Math.floor(((shard + 1) * CLUSTER_SLOTS) / masterCount) - 1;
      return { host: HOST, port: proxy.port, server, id: ids[at]!, shard, slots: [first, last] };
    });
    const masters = nodes.slice(0, masterCount);
    const replicas = nodes.slice(masterCount);

    // Distinct config epochs up front (as redis-cli does), so no collision has to be resolved.
    for (const [index, master] of masters.entries()) {
      await command(master.server.port, 'CLUSTER', 'SET-CONFIG-EPOCH', index + 1);
      await command(master.server.port, 'CLUSTER', 'ADDSLOTSRANGE', ...master.slots);
    }
    const meet = (at: number): Promise<unknown> =>
      command(
        nodes[0]!.server.port,
        'CLUSTER',
        'MEET',
        HOST,
        nodes[at]!.port,
        processes[at]!.busPort,
      );
    for (let at = 1; at < nodes.length; at += 1) await meet(at);
    const everyView = async (holds: (view: ClusterView) => boolean): Promise<true | undefined> => {
      const views = await Promise.all(nodes.map((node) => clusterView(node.server.port)));
      return views.every((view) => view !== undefined && holds(view)) ? true : undefined;
    };
    let metAgainAt = Date.now();
    await pollFor(
      async () => {
        const known = await everyView(
          (view) =>
            view.size === nodes.length &&
            [...view.values()].every((node) => !node.flags.includes('handshake')),
        );
        if (known || Date.now() - metAgainAt < 1_000) return known;
        // Redis drops a handshake not done within the node timeout (1 s here; a loaded machine
        // misses it) and meets no one again by itself: the first node meets whom it still lacks.
        metAgainAt = Date.now();
        const view = await clusterView(nodes[0]!.server.port);
        for (let at = 1; at < nodes.length; at += 1)
          if (view !== undefined && !view.has(nodes[at]!.id)) await meet(at).catch(() => undefined);
        return undefined;
      },
      'every cluster node to know every other',
      15_000,
    );
    for (const replica of replicas)
      await command(replica.server.port, 'CLUSTER', 'REPLICATE', masters[replica.shard]!.id);
    // Failover needs every master to know whose replica a node is (they vote only for those).
    await pollFor(
      () =>
        everyView((view) =>
          replicas.every((replica) => {
            const seen = view.get(replica.id);
            return seen?.flags.includes('slave') && seen.master === masters[replica.shard]!.id;
          }),
        ),
      'every node to see the replicas under their masters',
      15_000,
    );
    for (const replica of replicas)
      await pollFor(
        async () =>
          (await inSync(masters[replica.shard]!.server.port, replica.server.port))
            ? true
            : undefined,
        `replica ${replica.port} to sync`,
        10_000,
      );
    await pollFor(
      async () => {
        const states = await Promise.all(nodes.map((node) => clusterStateOk(node.server.port)));
        return states.every(Boolean) ? true : undefined;
      },
      'cluster_state:ok on every node',
      15_000,
    );

    const setReplicationDelay = (ms: number): void => {
      for (const { proxy } of processes) proxy.setDelay(ms);
    };
    setReplicationDelay(options.replicationDelayMs ?? 0);
    await proxies.settled();
    const current = masters.slice();
    const dead = new Set<ClusterBedNode>();
    const processOf = (node: ClusterBedNode): ClusterProcess => processes[nodes.indexOf(node)]!;
    return {
      nodes: nodes.map(({ host, port }) => ({ host, port })),
      masters,
      replicas,
      async killMaster(index) {
        const master = current[index]!;
        dead.add(master);
        await master.server.kill();
        // Closed too, so a client is refused as by a dead node rather than accepted and dropped.
        await processOf(master).proxy.close();
      },
      async waitForPromotion(index, timeoutMs = 20_000) {
        const old = current[index]!;
        const live = nodes.filter((node) => !dead.has(node));
        const promoted = await pollFor(
          async () => {
            for (const candidate of live.filter((node) => node.shard === index && node !== old))
              if ((await role(candidate.server.port)) === 'master') return candidate;
            return undefined;
          },
          `a replica of shard ${index} to be promoted`,
          timeoutMs,
        );
        await pollFor(
          async () => {
            const views = await Promise.all(live.map((node) => clusterView(node.server.port)));
            const agreed = views.every((view) => view?.get(promoted.id)?.flags.includes('master'));
            const states = await Promise.all(live.map((node) => clusterStateOk(node.server.port)));
            return agreed && states.every(Boolean) ? true : undefined;
          },
          `every live node to see ${promoted.port} as master with cluster_state:ok`,
          timeoutMs,
        );
        current[index] = promoted;
        return { host: promoted.host, port: promoted.port };
      },
      setReplicationDelay,
      caughtUp: (timeoutMs = 15_000) =>
        replicasInSync(
          replicas.map((replica) => [masters[replica.shard]!.server.port, replica.server.port]),
          timeoutMs,
        ),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
