// express-session's store with a deadline on every call. node-redis times a command out only while
// it waits to be written (`commandOptions.timeout`); once sent to a Redis that stalls (connection up,
// nothing answered), its reply is awaited for as long as the connection lasts, and express-session's
// session read with it. ioredis has `commandTimeout` for this; on node-redis the example wraps
// connect-redis in this store.
import session from 'express-session';
import { StoreUnavailableError } from 'express-platform-login';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- express-session's own callback type
type Done = (error?: any, value?: any) => void;

/** `store` answering within `deadlineMs` or failing with StoreUnavailableError (503 store_unavailable). */
export class SessionStoreDeadline extends session.Store {
  constructor(
    private readonly store: session.Store,
    private readonly deadlineMs: number,
  ) {
    super();
  }

  override get(sid: string, callback: Done): void {
    this.within(callback, (done) => this.store.get(sid, done));
  }

  override set(sid: string, data: session.SessionData, callback?: Done): void {
    this.within(callback, (done) => this.store.set(sid, data, done));
  }

  override destroy(sid: string, callback?: Done): void {
    this.within(callback, (done) => this.store.destroy(sid, done));
  }

  override touch(sid: string, data: session.SessionData, callback?: Done): void {
    const touch = this.store.touch?.bind(this.store);
    if (touch) this.within(callback, (done) => touch(sid, data, () => done()));
    else callback?.();
  }

  /** Runs `call`; `callback` hears its answer, or the deadline's error first (a late answer is dropped). */
  private within(callback: Done | undefined, call: (done: Done) => void): void {
    let settled = false;
    const settle: Done = (error, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      callback?.(error, value);
    };
    const timer = setTimeout(
      () =>
        settle(
          new StoreUnavailableError(`The session store did not answer in ${this.deadlineMs} ms.`),
        ),
      this.deadlineMs,
    );
    call(settle);
  }
}
