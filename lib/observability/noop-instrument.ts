// Tells whether an instrument is OpenTelemetry's no-op (no SDK registered): then what it would
// record need not be measured at all, e.g. the clock reads around every store read.
import { createNoopMeter, type Histogram } from '@opentelemetry/api';

/** The API's shared no-op histogram: what every meter of the no-op provider hands out. */
const NOOP_HISTOGRAM = createNoopMeter().createHistogram('noop');

/** True when `histogram` records nothing (the API's no-op). */
export const isNoopInstrument = (histogram: Histogram): boolean => histogram === NOOP_HISTOGRAM;
