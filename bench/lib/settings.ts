// Constants shared by the benchmark driver and the app processes it starts.
import { DEMO_CLIENT_ID, DEMO_CLIENT_SECRET } from '../../lib/simulator/options';

/** The simulator's demo registration, used by every benchmarked app. */
export const BENCH_CLIENT = { clientId: DEMO_CLIENT_ID, clientSecret: DEMO_CLIENT_SECRET };

/** The redirect_uri the apps send and the codes are issued for (never opened: loopback only). */
export const BENCH_REDIRECT_URI = 'http://127.0.0.1:3999/platform/callback';

/** One session secret for all processes, so a cookie works on any of them. */
export const BENCH_SESSION_SECRET = 'a-bench-session-secret-shared-by-all-processes';

/** platformLogin()'s settings on the simulator at `simUrl`, entries checked against its lobby. */
export const benchLogin = (simUrl: string) => ({
  ...{ authUrl: simUrl, ...BENCH_CLIENT, redirectUri: BENCH_REDIRECT_URI },
  platformOrigins: [new URL(simUrl).origin],
});
