// `npm run example` itself, twice, the second started a second after the first (several processes
// behave as one service: docs/example-app.md): both serve the whole browser flow, and neither start
// takes away the built package that other processes load (dist/: a game installed from this
// checkout, the bench, the packaged tests). The command once deleted and rebuilt dist/ on every start.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { exampleFlow, WHOLE_FLOW } from '../helpers/example-flow';
import { freePort } from '../helpers/free-port';

const ROOT = join(__dirname, '../..');
const run = promisify(execFile);

/** One `npm run example`, in a process group of its own (npm, its shell, the example). */
interface NpmExample {
  child: ChildProcess;
  output: () => string;
  exited: Promise<unknown>;
}

function npmRunExample(port: number): NpmExample {
  const env: NodeJS.ProcessEnv = {};
  // Not this test run's npm, Jest or Redis settings: the example's embedded defaults.
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(npm_|JEST_)/.test(name) && !['NODE_OPTIONS', 'REDIS_URL'].includes(name)) {
      env[name] = value;
    }
  }
  const child = spawn('npm', ['run', 'example'], {
    cwd: ROOT,
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output, exited: once(child, 'exit') };
}

async function stop(example: NpmExample): Promise<void> {
  if (example.child.exitCode !== null || example.child.signalCode !== null) return;
  process.kill(-example.child.pid!, 'SIGTERM');
  const timer = setTimeout(() => process.kill(-example.child.pid!, 'SIGKILL'), 5000);
  await example.exited;
  clearTimeout(timer);
}

/** The example's address once it printed it; fails with its output if it exits first. */
function urlOf(example: NpmExample): string | undefined {
  if (example.child.exitCode !== null) {
    throw new Error(`npm run example exited at start:\n${example.output()}`);
  }
  return /Example game backend: (http:\/\/\S+\/)/.exec(example.output())?.[1];
}

/** Whether a process loading the built package by name (as a game installed from here does) finds it. */
async function builtPackageLoads(): Promise<string> {
  return run(process.execPath, ['-e', "require('express-platform-login')"], { cwd: ROOT }).then(
    () => 'loads',
    (error: { stderr?: string }) =>
      /Cannot find module[^\n]*/.exec(error.stderr ?? '')?.[0] ?? 'fails',
  );
}

test('two `npm run example` started a second apart both serve the whole browser flow, and the built package stays loadable meanwhile', async () => {
  if (!existsSync(join(ROOT, 'dist', 'index.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first (`npm test` builds first).');
  }
  const [firstPort, secondPort] = [await freePort(), await freePort()];
  const first = npmRunExample(firstPort);
  const examples = [first];
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const second = npmRunExample(secondPort);
    examples.push(second);

    // While they start, another process loads the built package again and again.
    const loads: string[] = [];
    const deadline = Date.now() + 90_000;
    while (urlOf(first) === undefined || urlOf(second) === undefined) {
      if (Date.now() > deadline) throw new Error('the examples did not start in 90 s');
      loads.push(await builtPackageLoads());
    }
    expect([...new Set(loads)]).toEqual(['loads']);

    expect(await exampleFlow(urlOf(first)!)).toEqual(WHOLE_FLOW);
    expect(await exampleFlow(urlOf(second)!)).toEqual(WHOLE_FLOW);
    // The first still serves after the second's start.
    expect(await exampleFlow(urlOf(first)!)).toEqual(WHOLE_FLOW);
    expect(await builtPackageLoads()).toBe('loads');
  } finally {
    await Promise.all(examples.map(stop));
  }
}, 120_000);
