// The child process of replication-delay-proxy-process.ts: runs delaying proxies
// (replication-delay-proxy.ts) as the parent asks over IPC, so their relaying runs on this event
// loop rather than the parent's. Started on the sources (on-sources.ts); exits with its parent.
import { startReplicationDelayProxy, type ReplicationDelayProxy } from './replication-delay-proxy';
import type { ProxyReply, ProxyRequest } from './replication-delay-proxy-process';

const proxies = new Map<number, ReplicationDelayProxy>();

function reply(answer: ProxyReply): void {
  // The parent may have gone meanwhile: nobody to answer.
  if (process.connected) process.send!(answer);
}

async function handle(request: ProxyRequest): Promise<void> {
  switch (request.op) {
    case 'start':
      try {
        const proxy = await startReplicationDelayProxy(request.targetPort, request.delayMs);
        proxies.set(proxy.port, proxy);
        reply({ id: request.id, port: proxy.port });
      } catch (error) {
        reply({ id: request.id, error: String(error) });
      }
      return;
    // Synchronous and unanswered: a later 'settled' answered means it has taken effect.
    case 'setDelay':
      proxies.get(request.port)?.setDelay(request.ms);
      return;
    case 'close': {
      const proxy = proxies.get(request.port);
      proxies.delete(request.port);
      // Answered once the port is closed: a connection then is refused, as by a dead node.
      await proxy?.close();
      reply({ id: request.id });
      return;
    }
    case 'settled':
      reply({ id: request.id });
  }
}

process.on('message', (request: ProxyRequest) => void handle(request));
// The parent closed the channel or died: the proxies are of no use to anyone. Exiting closes their
// ports and connections.
process.on('disconnect', () => process.exit(0));
