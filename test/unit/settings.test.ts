// The settings of one PlatformLogin, derived once at creation: each part's slice in the units it
// works in, shared values derived once, and the creation checks run in one place.
import { deriveSettings } from '../../lib/settings';
import { checkCreation } from '../../lib/setup/creation-checks';
import { SetupError } from '../../lib/errors';
import { MemoryTokenStore } from '../../lib/stores/memory-store';
import type { PlatformLoginOptions } from '../../lib/options';

const base: PlatformLoginOptions = {
  authUrl: 'https://auth.platform.example',
  clientId: 'demo-game',
  clientSecret: 'canary-secret-31c9',
  redirectUri: 'https://game.example/platform/callback',
  platformOrigins: ['https://platform.example'],
};

describe('deriveSettings', () => {
  test('each slice is in the units its part works in', () => {
    const settings = deriveSettings({
      ...base,
      sessionMaxAgeSeconds: 3600,
      refresh: { skewSeconds: 30, failureCooldownSeconds: 2, tokenLifetimeSeconds: 86_400 },
      entry: { failureWindowSeconds: 60, codeClaimTtlSeconds: 1200, failureLimit: 7 },
    });
    expect(settings.sessionTtlMs).toBe(3_600_000);
    expect(settings.refresh).toMatchObject({
      sessionTtlMs: 3_600_000,
      refreshTokenLifetimeMs: 86_400_000,
      failureCooldownMs: 2000,
      freshness: { refreshSkewMs: 30_000, refreshAheadFraction: 0.5 },
    });
    expect(settings.entry.failureLimit).toMatchObject({ limit: 7, windowMs: 60_000 });
    expect(settings.entry.claimTtlMs).toBe(1_200_000);
    expect(settings.entry.redemption).toEqual({
      refreshTokenLifetimeMs: 86_400_000,
      maxExchangesInFlight: 64,
      sessionTtlMs: 3_600_000,
    });
    expect(settings.entry.guards.context.mode).toBe('enforce');
  });

  test('a value two parts share is derived once: the lock-wait deadline of refresh and metrics', () => {
    const settings = deriveSettings(base);
    expect(settings.refresh.lockWaitDeadlineMs).toBe(
      settings.refresh.maxRefreshMs + settings.refresh.lockTtlMs + 1000,
    );
    expect(settings.metrics.maxLockWaitMs).toBe(settings.refresh.lockWaitDeadlineMs);
  });

  test('the open-API bases, by name, without a trailing slash', () => {
    const settings = deriveSettings({
      ...base,
      api: { url: 'https://api.platform.example/v1/', urls: { pay: 'https://pay.example' } },
    });
    expect(settings.api.bases.map(({ name, href }) => [name, href])).toEqual([
      ['default', 'https://api.platform.example/v1'],
      ['pay', 'https://pay.example'],
    ]);
  });

  test('a wrong option is a SetupError naming it', () => {
    expect(() => deriveSettings({ ...base, entry: { failureLimit: -1 } })).toThrow(
      expect.objectContaining({
        code: 'ERR_PLATFORM_INVALID_OPTION',
        option: 'entry.failureLimit',
      }),
    );
  });
});

describe('checkCreation (the checks that need only the options)', () => {
  const input = { store: new MemoryTokenStore(), ...base };

  test('production refuses a start without platformOrigins unless a mode is chosen', () => {
    const open = { ...input, platformOrigins: undefined };
    expect(() => checkCreation(open, true)).toThrow(SetupError);
    expect(() => checkCreation(open, true)).toThrow(
      expect.objectContaining({ code: 'ERR_PLATFORM_INVALID_OPTION', option: 'platformOrigins' }),
    );
    expect(() => checkCreation({ ...open, entryContextMode: 'report' }, true)).not.toThrow();
    expect(() => checkCreation(open, false)).not.toThrow();
  });

  test('a store lacking a method of the contract is refused, naming the store', () => {
    const store = new MemoryTokenStore();
    const partial = { get: store.get.bind(store), put: store.put.bind(store) };
    expect(() => checkCreation({ ...input, store: partial as never }, false)).toThrow(
      expect.objectContaining({ code: 'ERR_PLATFORM_INVALID_OPTION', option: 'store' }),
    );
  });
});
