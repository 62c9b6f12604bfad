// An answer that arrives over a real socket while the event loop is stalled (a GC pause, a loaded
// machine): when the loop wakes, it runs its due timers before it reads the answer waiting in the
// kernel's buffer. For the tests of a deadline that must not fail a call answered in time.
import { createServer, connect, type Socket } from 'node:net';

export interface StallBed {
  /**
   * Sends an answer, then blocks the event loop for `stallMs`; resolves once the answer is read
   * (the event loop's next poll).
   */
  answerDuringStall(stallMs: number): Promise<void>;
  close(): void;
}

export async function stallBed(): Promise<StallBed> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
  const client = connect((server.address() as { port: number }).port, '127.0.0.1');
  const serverSide = await accepted;
  return {
    answerDuringStall(stallMs) {
      const read = new Promise<void>((resolve) => client.once('data', () => resolve()));
      serverSide.write('+OK\r\n');
      const stalledUntil = Date.now() + stallMs;
      while (Date.now() < stalledUntil);
      return read;
    },
    close() {
      client.destroy();
      serverSide.destroy();
      server.close();
    },
  };
}
