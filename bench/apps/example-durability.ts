// Preload for the example processes of the `failover` section: BENCH_DURABILITY=off gives the
// example's RedisTokenStore `durability: false` (unset or `on`: the example as `npm run example`
// starts it). The example keeps no switch for it: this hands `require('express-platform-login')` a
// copy of the package's exports whose RedisTokenStore adds the option, the rest the example's own.
import Module from 'node:module';

const setting = process.env.BENCH_DURABILITY ?? 'on';
if (setting !== 'on' && setting !== 'off')
  throw new TypeError(`BENCH_DURABILITY must be "on" or "off"; it is "${setting}".`);

if (setting === 'off') {
  type Load = (request: string, ...rest: unknown[]) => unknown;
  const loader = Module as unknown as { _load: Load };
  const load = loader._load;
  let patched: Record<string, unknown> | undefined;
  loader._load = function (request, ...rest) {
    const exported = load.call(this, request, ...rest);
    if (request !== 'express-platform-login') return exported;
    if (patched === undefined) {
      const real = exported as Record<string, unknown> & {
        RedisTokenStore: new (options: object) => object;
      };
      const Base = real.RedisTokenStore;
      class RedisTokenStoreWithoutDurability extends Base {
        constructor(options: object) {
          super({ ...options, durability: false });
        }
      }
      patched = { ...real, RedisTokenStore: RedisTokenStoreWithoutDurability };
      Object.defineProperty(patched, '__esModule', { value: true });
    }
    return patched;
  };
}
