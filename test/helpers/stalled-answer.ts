// A stalled event loop (a GC pause, a loaded machine), and an answer that arrives over a real socket
// meanwhile: when the loop wakes, it runs its due timers before it reads the answer waiting in the
// kernel's buffer. For the tests of a deadline that must not fail a call answered in time.
import { createServer, connect, type Socket } from 'node:net';

/** Blocks this process's event loop for `ms`, as a GC pause or a long synchronous task would. */
export function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

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
      stall(stallMs);
      return read;
    },
    close() {
      client.destroy();
      serverSide.destroy();
      server.close();
    },
  };
}
