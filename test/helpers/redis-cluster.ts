// Starts a Redis Cluster of private redis-servers on loopback (masters only) for tests, and stops it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from './free-port';
import { startRedisServer, type TestRedisServer } from './redis-server';

const run = promisify(execFile);

/** A running test cluster. */
export interface TestRedisCluster {
  /** Start-up nodes for `new Cluster(nodes)`. */
  nodes: Array<{ host: string; port: number }>;
  servers: TestRedisServer[];
  stop(): Promise<void>;
}

/** redis-server's flags for a cluster node with its bus on `busPort` and that node timeout. */
export const clusterNodeArgs = (busPort: number, nodeTimeoutMs: number): string[] => [
  '--cluster-enabled',
  'yes',
  '--cluster-config-file',
  'nodes.conf',
  '--cluster-port',
  String(busPort),
  '--cluster-node-timeout',
  String(nodeTimeoutMs),
];

async function clusterStateOk(port: number): Promise<boolean> {
  const probe = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await probe.connect();
    const info = await probe.cluster('INFO');
    return /cluster_state:ok/.test(String(info));
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** Starts `masters` cluster-enabled servers, joins them with `redis-cli --cluster create`. */
export async function startRedisCluster(masters = 3): Promise<TestRedisCluster> {
  const servers: TestRedisServer[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((server) => server.stop()));
  };
  try {
    for (let index = 0; index < masters; index += 1) {
      // The bus port must be given: the default (port + 10000) may be taken or beyond 65535.
      const busPort = await freePort();
      servers.push(await startRedisServer(clusterNodeArgs(busPort, 5000)));
    }
    await run(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...servers.map((server) => `127.0.0.1:${server.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { timeout: 20_000 },
    );
    const deadline = Date.now() + 20_000;
    for (;;) {
      const states = await Promise.all(servers.map((server) => clusterStateOk(server.port)));
      if (states.every(Boolean)) break;
      if (Date.now() > deadline)
        throw new Error('the test Redis Cluster did not reach cluster_state:ok');
      await sleep(100);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    nodes: servers.map((server) => ({ host: '127.0.0.1', port: server.port })),
    servers,
    stop,
  };
}
