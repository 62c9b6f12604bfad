// Bounds a store call in time. ioredis on its own can keep a command waiting for tens of seconds
// while Redis is stalled or reconnecting; a request must get `store_unavailable` instead.
import { storeUnavailable, StoreUnavailableError } from '../errors';
import { storeFailed } from './redis-errors';
import { deadlineTimer } from '../util/deadline-timer';

/**
 * Resolves or rejects like `operation`, but rejects with `StoreUnavailableError` when it has not
 * settled within `timeoutMs`, and turns any rejection of `operation` into `StoreUnavailableError`.
 * `what` names the operation in the message (never a key, a token or a session id), `store` the
 * store that made it.
 */
export function withDeadline<T>(
  operation: Promise<T>,
  timeoutMs: number,
  what: string,
  store: 'token store' | 'session store' = 'token store',
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancel = deadlineTimer(
      () => reject(storeUnavailable({ store, what, timeoutMs })),
      timeoutMs,
    );
    // Both handlers stay attached after the deadline, so a late failure of the command (the
    // connection dropping under it) is absorbed here instead of becoming an unhandled rejection.
    operation.then(
      (value) => {
        cancel();
        resolve(value);
      },
      (error: unknown) => {
        cancel();
        reject(
          error instanceof StoreUnavailableError ? error : storeFailed({ store, what }, error),
        );
      },
    );
  });
}
