// The deadline every RedisTokenStore call runs under.
import { setTimeout as sleep } from 'node:timers/promises';
import { StoreUnavailableError } from '../../lib/errors';
import { withDeadline } from '../../lib/redis/with-deadline';
import { stallBed } from '../helpers/stalled-answer';

describe('withDeadline', () => {
  test('passes a timely value through', async () => {
    await expect(withDeadline(Promise.resolve('value'), 1000, 'a read')).resolves.toBe('value');
  });

  test('a call that does not settle in time fails with StoreUnavailableError', async () => {
    const never = new Promise<never>(() => undefined);
    const error = await withDeadline(never, 50, 'a read').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error).toMatchObject({ status: 503, error: 'store_unavailable' });
    expect((error as Error).message).toContain('within 50 ms');
  });

  test('a failure of the call becomes StoreUnavailableError, keeping only a safe cause', async () => {
    const failure = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1 token=abc'), {
      code: 'ECONNREFUSED',
    });
    const error = await withDeadline(Promise.reject(failure), 1000, 'a write').catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).cause).toEqual({ name: 'Error', code: 'ECONNREFUSED' });
    expect(JSON.stringify(error)).not.toContain('token=abc');
  });

  test('a call that fails after its deadline is not an unhandled rejection', async () => {
    const late = sleep(100).then(() => {
      throw new Error('Connection is closed.');
    });
    await expect(withDeadline(late, 20, 'a read')).rejects.toBeInstanceOf(StoreUnavailableError);
    // Jest fails the running test on an unhandled rejection; stay in the test until `late` failed.
    await expect(late).rejects.toThrow('Connection is closed.');
    await sleep(50);
  });

  test('a call answered while the event loop was stalled past the deadline resolves', async () => {
    const bed = await stallBed();
    try {
      let answered!: () => void;
      const call = new Promise<string>((resolve) => (answered = () => resolve('value')));
      const bounded = withDeadline(call, 50, 'a read');
      await bed.answerDuringStall(250);
      answered();
      await expect(bounded).resolves.toBe('value');
    } finally {
      bed.close();
    }
  });
});
