// A private redis-server with one replica, for tests of what the package does where a write can
// reach a replica (or be lost with its primary).
import { Redis } from 'ioredis';
import { startRedisServer, type TestRedisServer } from './redis-server';
import { waitUntil } from './wait-until';

/** Starts a primary and a replica of it; resolves once both say the replica is in sync. */
export async function startPrimaryAndReplica(): Promise<{
  primary: TestRedisServer;
  replica: TestRedisServer;
}> {
  // A full sync starts at once (the default waits 5 s for more replicas).
  const primary = await startRedisServer(['--repl-diskless-sync-delay', '0']);
  const replica = await startRedisServer(['--replicaof', '127.0.0.1', String(primary.port)]);
  const [onPrimary, onReplica] = [new Redis(primary.url), new Redis(replica.url)];
  try {
    await waitUntil(
      async () =>
        /state=online/.test(await onPrimary.info('replication')) &&
        /master_link_status:up/.test(await onReplica.info('replication')),
      'the replica in sync',
    );
  } finally {
    onPrimary.disconnect();
    onReplica.disconnect();
  }
  return { primary, replica };
}
