import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The package's layers, lowest first: util → redis (the client seam), client, observability →
 * caching → core → durability → stores → setup →
 * http (the request) → cross-site → entry → sockets, jobs → options, platform-login, index. A folder
 * imports only from folders below it (and the leaf `errors.ts`); the simulator stands apart and
 * imports nothing of the package but `util/`.
 */
const frameworks = (message) =>
  ['express', 'express-session', 'connect-redis'].map((name) => ({ name, message }));
const layer = (files, forbidden, message, paths = []) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      { paths, patterns: [{ regex: `^(\\.\\./)+(${forbidden.join('|')})(/|$)`, message }] },
    ],
  },
});
const ABOVE_CORE = [
  'durability',
  'stores',
  'setup',
  'http',
  'cross-site',
  'registrations',
  'entry',
  'sockets',
  'jobs',
  'simulator',
  'testing',
  'platform-login',
  'options',
  'index',
];
const ABOVE_STORES = ABOVE_CORE.slice(2);

export default tseslint.config(
  { ignores: ['dist/**', 'coverage/**', 'node_modules/**', '.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-namespace': 'off',
    },
  },
  layer(
    ['lib/util/**'],
    ['redis', 'caching', 'client', 'core', 'observability', ...ABOVE_CORE],
    'util/ is the bottom layer: it imports nothing of the package but errors.ts.',
    frameworks('util/ never touches Express.'),
  ),
  layer(
    ['lib/redis/**'],
    ['caching', 'client', 'core', 'observability', ...ABOVE_CORE],
    'redis/ is the client seam (ioredis, node-redis): it knows no token, record or cache.',
    frameworks('redis/ never touches Express.'),
  ),
  layer(
    ['lib/caching/**'],
    ['client', 'core', 'observability', ...ABOVE_CORE],
    'caching/ keeps values the server tells it about; it knows the seam, not what the values are.',
    frameworks('caching/ never touches Express.'),
  ),
  layer(
    ['lib/durability/**'],
    ['stores', ...ABOVE_STORES],
    'durability/ waits for replicas and keeps writes; the stores use it, never the other way.',
    frameworks('durability/ never touches Express.'),
  ),
  layer(
    ['lib/client/**'],
    ['redis', 'caching', 'core', 'observability', ...ABOVE_CORE],
    'The token client stands alone: no token records, stores, Express or wiring.',
    [
      ...frameworks('The token client never touches Express.'),
      { name: 'ioredis', message: 'The token client never touches Redis.' },
    ],
  ),
  layer(
    ['lib/observability/**'],
    ['redis', 'core', ...ABOVE_CORE],
    'observability/ describes events and metrics; it does not reach into the parts that emit them.',
  ),
  layer(
    ['lib/core/**'],
    ['redis', 'caching', ...ABOVE_CORE],
    'core/ (token records, refresh coordination) knows stores only through core/token-store.ts and never Express.',
    [
      ...frameworks('core/ never touches Express.'),
      { name: 'ioredis', message: 'core/ never touches Redis.' },
    ],
  ),
  layer(
    ['lib/stores/**'],
    ABOVE_STORES,
    'Stores never import setup checks, the HTTP layers or the wiring above them.',
    frameworks('Stores never touch Express.'),
  ),
  layer(
    ['lib/setup/**'],
    [
      'http',
      'cross-site',
      'entry',
      'sockets',
      'jobs',
      'simulator',
      'testing',
      'platform-login',
      'options',
      'index',
    ],
    'setup/ (deployment diagnostics) reads the stores and the session setup; it serves no request and imports no HTTP layer.',
  ),
  layer(
    ['lib/http/**'],
    [
      'stores',
      'setup',
      'cross-site',
      'entry',
      'sockets',
      'jobs',
      'simulator',
      'testing',
      'platform-login',
      'options',
      'index',
    ],
    'http/ (the request: middleware, player context, logout, error answers) knows the store only through core/ and is wired by platform-login.ts; entry/, cross-site/, sockets/ and jobs/ are built on it, not it on them.',
  ),
  layer(
    ['lib/cross-site/**'],
    [
      'stores',
      'entry',
      'sockets',
      'jobs',
      'simulator',
      'testing',
      'platform-login',
      'options',
      'index',
    ],
    'cross-site/ (CSRF, frame-ancestors, origins) is wired by platform-login.ts; it knows no store and no entry flow.',
  ),
  layer(
    ['lib/registrations/**'],
    [
      'stores',
      'setup',
      'http',
      'entry',
      'sockets',
      'jobs',
      'simulator',
      'testing',
      'platform-login',
      'options',
      'index',
    ],
    'registrations/ (the options of several registrations, a refresh by registration, how a player is named) is wired by platform-login.ts; it knows the store only through core/.',
  ),
  layer(
    ['lib/entry/**'],
    ['stores', 'sockets', 'jobs', 'simulator', 'testing', 'platform-login', 'options', 'index'],
    'entry/ (the entry flow) knows the store only through core/ and is wired by platform-login.ts.',
  ),
  layer(
    ['lib/open-api/**'],
    ['core', ...ABOVE_CORE],
    'open-api/ (the open-API client) knows no login, store or Express: it is handed a URL and a token.',
    frameworks('open-api/ never touches Express.'),
  ),
  layer(
    ['lib/sockets/**', 'lib/jobs/**'],
    [
      'stores',
      'setup',
      'entry',
      'cross-site',
      'simulator',
      'testing',
      'platform-login',
      'options',
      'index',
    ],
    'Sockets and jobs reach the store through sockets/store-access.ts and are wired by platform-login.ts.',
    [
      {
        name: 'ws',
        message: 'The ws adapter is typed structurally: the package does not import ws.',
      },
      { name: 'socket.io', message: 'The socket.io adapter is typed structurally.' },
    ],
  ),
  layer(
    ['lib/testing/**'],
    [
      'client',
      'observability',
      'stores',
      'setup',
      'http',
      'cross-site',
      'entry',
      'sockets',
      'jobs',
      'simulator',
      'platform-login',
      'options',
      'index',
    ],
    'testing/ (the store contract suite) knows stores only through core/token-store.ts.',
    frameworks('testing/ never touches Express.'),
  ),
  layer(
    ['lib/simulator/**'],
    [
      'client',
      'core',
      'observability',
      'stores',
      'setup',
      'http',
      'cross-site',
      'entry',
      'sockets',
      'jobs',
      'platform-login',
      'options',
      'index',
      'errors',
      'testing',
    ],
    'The simulator stands apart: it imports nothing of the package but util/.',
  ),
);
