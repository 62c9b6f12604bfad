// Options of MemoryTokenStore: one strict schema, documented field by field, parsed once.
import { z } from 'zod';
import type { OptionsSchema } from '../util/parse-options';

const memoryTokenStoreShape = {
  /**
   * Most values kept: records, the players' logins, locks, code claims and counters together (a
   * login takes about three). When it is full and none has expired, a new value is refused with
   * `StoreUnavailableError` (503 `store_unavailable`): dropping an unexpired claim or lock would let
   * a code be sent twice or a refresh run twice. Defaults to `100000`.
   */
  maxEntries: z.number({ error: 'must be an integer, at least 1' }).int().min(1).default(100_000),
};

/** The schema of `new MemoryTokenStore(options)`. */
export const memoryTokenStoreOptionsSchema: OptionsSchema<typeof memoryTokenStoreShape> =
  z.strictObject(memoryTokenStoreShape);

/** Options of `new MemoryTokenStore(options)`. */
export type MemoryTokenStoreOptions = z.input<typeof memoryTokenStoreOptionsSchema>;
