// Options of MemoryTokenStore: the documented interface and the strict schema that parses them once.
import { z } from 'zod';
import { parseOptions, type SameOptions } from '../util/parse-options';

/** Options of `new MemoryTokenStore(options)`. */
export interface MemoryTokenStoreOptions {
  /**
   * Most records kept (and, separately, most locks, code claims and counters). When the records are
   * full the oldest written goes; when the claims are full (and none has expired) a new claim is
   * refused with `StoreUnavailableError` (the entry answers 503 `store_unavailable`), since
   * dropping an unexpired claim would let a code be sent twice. Defaults to `10000`.
   */
  maxEntries?: number;
}

const memoryTokenStoreOptionsSchema = z.strictObject({
  maxEntries: z.number({ error: 'must be an integer, at least 1' }).int().min(1).default(10_000),
});

const _documented: SameOptions<
  MemoryTokenStoreOptions,
  z.input<typeof memoryTokenStoreOptionsSchema>
> = true;

/** Parses the options once; throws a SetupError (`ERR_PLATFORM_INVALID_OPTION`) naming a wrong or unknown option. */
export function parseMemoryTokenStoreOptions(
  options: MemoryTokenStoreOptions | undefined,
): z.output<typeof memoryTokenStoreOptionsSchema> {
  return parseOptions(memoryTokenStoreOptionsSchema, options, 'MemoryTokenStore');
}
