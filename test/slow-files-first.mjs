// The order Jest runs the test files in: the known-slow files first, slowest first, so that no long
// file starts late and runs alone at the end while the other worker idles. Jest orders files by the
// durations of the last run, kept in its cache; a fresh clone has none, and Jest falls back to file
// size, which says little of how long a file waits on Redis, child processes and timers.
import { relative } from 'node:path';
import Sequencer from '@jest/test-sequencer';

/**
 * Files (from the repository's root) that take longest, slowest first, as `jest --json` times them
 * (each testResults entry's endTime − startTime); the others follow in Jest's own order.
 */
const SLOWEST_FIRST = [
  'test/integration/failover-kills.test.ts',
  'test/integration/durability-signs.test.ts',
  'test/integration/example-topologies.test.ts',
  'test/integration/faults-process-kill.test.ts',
  'test/integration/published-types.test.ts',
  'test/integration/quick-start.test.ts',
  'test/integration/session-store.test.ts',
  'test/integration/redis-seam.test.ts',
  'test/integration/failover-replica-waits.test.ts',
  'test/integration/cluster-cache.test.ts',
  'test/integration/example-app.test.ts',
  'test/integration/faults-refresh-waits.test.ts',
  'test/integration/example-browser.test.ts',
  'test/integration/testing-recipe.test.ts',
  'test/integration/failover-bed.test.ts',
  'test/integration/fuzz-middleware.test.ts',
  'test/integration/example-answer-styles.test.ts',
  'test/integration/quick-start-browser.test.ts',
  'test/integration/quick-start-outages.test.ts',
  'test/integration/example-socket.test.ts',
  'test/integration/failover-cluster.test.ts',
  'test/integration/example-npm-run.test.ts',
  'test/integration/multi-process.test.ts',
  'test/integration/faults-redis.test.ts',
];

export default class SlowFilesFirst extends Sequencer {
  sort(tests) {
    const rank = (test) => {
      // A file that failed last time still comes first, as in Jest's own order.
      if (this.hasFailed(test)) return -1;
      const at = SLOWEST_FIRST.indexOf(relative(test.context.config.rootDir, test.path));
      return at === -1 ? SLOWEST_FIRST.length : at;
    };
    // Array.prototype.sort is stable: files of one rank keep Jest's order.
    return super.sort(tests).sort((a, b) => rank(a) - rank(b));
  }
}
