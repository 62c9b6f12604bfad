// The sockets' instruments (naming as in observability/metrics.ts): how many sockets follow their
// login on this process, and over how many watched sessions — read when the app's reader collects.
import { metrics, type MeterProvider } from '@opentelemetry/api';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../observability/package-identity';
import type { LoginWatch } from './login-watch';

/** Registers `epl.sockets.open` and `epl.sockets.watched_sessions` (observable gauges) for `watch`. */
export function observeSockets(provider: MeterProvider | undefined, watch: LoginWatch): void {
  const meter = (provider ?? metrics).getMeter(PACKAGE_NAME, PACKAGE_VERSION);
  meter
    .createObservableGauge('epl.sockets.open', {
      description: 'Sockets of this process that follow their login',
    })
    .addCallback((result) => result.observe(watch.listenerCount));
  meter
    .createObservableGauge('epl.sockets.watched_sessions', {
      description:
        'Sessions this process watches for the end of their login (one store watch each)',
    })
    .addCallback((result) => result.observe(watch.size));
}
