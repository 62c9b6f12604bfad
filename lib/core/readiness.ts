// `login.ready()`: can this process serve logins right now? The store is asked (one read of a probe
// key that never exists); the platform is judged by when it last answered, since probing the token
// endpoint would cost the platform a call per check.
import { hashSessionId } from './hash';
import type { StoreEngine } from './store-engine';
import type { PlatformHealth } from '../observability/platform-health';

/** What `login.ready()` reports. */
export interface ReadinessReport {
  /** True when the token store answers; the platform's state is informative only. */
  ready: boolean;
  store: { ok: boolean; latencyMs: number; error?: string };
  platform: {
    /** When the token endpoint last answered (any status), ISO time; null if not since start. */
    lastAnsweredAt: string | null;
    /** `ok` or the error code of the last token-endpoint attempt; null if none yet. */
    lastOutcome: string | null;
  };
}

/** A session key no session can have (no hash has a colon). */
const PROBE_SESSION_KEY = `readiness-probe:${hashSessionId('express-platform-login')}`;

export async function checkReadiness(
  store: StoreEngine,
  health: PlatformHealth,
): Promise<ReadinessReport> {
  const startedAt = performance.now();
  const storeState: ReadinessReport['store'] = await store.records.get(PROBE_SESSION_KEY).then(
    () => ({ ok: true, latencyMs: Math.round(performance.now() - startedAt) }),
    (error: unknown) => {
      const code = (error as { code?: unknown }).code;
      const latencyMs = Math.round(performance.now() - startedAt);
      return { ok: false, latencyMs, error: typeof code === 'string' ? code : 'ERR_UNKNOWN' };
    },
  );
  return {
    ready: storeState.ok,
    store: storeState,
    platform: {
      lastAnsweredAt:
        health.platformLastAnsweredAt > 0
          ? new Date(health.platformLastAnsweredAt).toISOString()
          : null,
      lastOutcome: health.platformLastOutcome ?? null,
    },
  };
}
