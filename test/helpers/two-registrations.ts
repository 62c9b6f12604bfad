// The two registrations the registrations tests log players in through: the simulator's demo
// client (`web`) and a mini-game of its own (`mini`), both on the test's callback host.
import { DEMO_CLIENT_ID, DEMO_CLIENT_SECRET } from 'express-platform-login/simulator';

export const WEB_URI = 'http://127.0.0.1:3999/platform/callback';
export const MINI_URI = 'http://127.0.0.1:3999/platform/mini/callback';
export const MINI = { clientId: 'mini-game', clientSecret: 'mini-secret' };

/** The simulator's clients: the demo registration and the mini-game. */
export const BOTH_CLIENTS = [{ clientId: DEMO_CLIENT_ID, clientSecret: DEMO_CLIENT_SECRET }, MINI];

/** A code for `openId` through registration `via`, and the callback path it is sent to. */
export function entryCode(
  platform: {
    issueCode(options: { openId: string; clientId: string; redirectUri: string }): string;
  },
  openId: string,
  via: 'web' | 'mini',
): { code: string; path: string } {
  const [clientId, redirectUri] =
    via === 'web' ? [DEMO_CLIENT_ID, WEB_URI] : [MINI.clientId, MINI_URI];
  const code = platform.issueCode({ openId, clientId, redirectUri });
  return { code, path: new URL(redirectUri).pathname };
}
