// The package's name and version: the instrumentation scope of its meter and tracer.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const PACKAGE_NAME = 'express-platform-login';
/** Read once from package.json (two levels above lib/observability/ and dist/observability/). */
export const PACKAGE_VERSION = (
  JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;
