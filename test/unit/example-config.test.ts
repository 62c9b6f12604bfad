// The example's Redis variables as example-app/config.ts reads them (docs/example-app.md):
// one of REDIS_URL, REDIS_SENTINELS + REDIS_SENTINEL_NAME and REDIS_CLUSTER_NODES, and
// each wrong combination or address refused with a message naming the variable.
import { readConfig } from '../../example-app/config';

describe('where Redis is', () => {
  test('unset: no Redis (memory stores); an empty variable counts as unset', () => {
    expect(readConfig({}).redis).toBeUndefined();
    expect(
      readConfig({
        REDIS_URL: '',
        REDIS_SENTINELS: '',
        REDIS_SENTINEL_NAME: '',
        REDIS_CLUSTER_NODES: '',
      }).redis,
    ).toBeUndefined();
  });

  test('REDIS_URL: one server', () => {
    expect(readConfig({ REDIS_URL: 'redis://10.0.0.1:6379/2' }).redis).toStrictEqual({
      topology: 'standalone',
      url: 'redis://10.0.0.1:6379/2',
    });
  });

  test('REDIS_SENTINELS + REDIS_SENTINEL_NAME: the sentinels, spaces and a trailing comma left out, and the master name', () => {
    expect(
      readConfig({
        REDIS_SENTINELS: ' 10.0.0.1:26379, sentinel-b.internal:26380 ,[::1]:26381,',
        REDIS_SENTINEL_NAME: 'mymaster',
        REDIS_CLUSTER_NODES: '',
      }).redis,
    ).toStrictEqual({
      topology: 'sentinel',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: 'sentinel-b.internal', port: 26380 },
        { host: '::1', port: 26381 },
      ],
      name: 'mymaster',
    });
  });

  test('REDIS_CLUSTER_NODES: the seed nodes', () => {
    expect(
      readConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:7000,127.0.0.1:7001', REDIS_URL: '' }).redis,
    ).toStrictEqual({
      topology: 'cluster',
      nodes: [
        { host: '127.0.0.1', port: 7000 },
        { host: '127.0.0.1', port: 7001 },
      ],
    });
  });
});

describe('refused, naming the variables', () => {
  const URL = 'redis://127.0.0.1:6379';
  const SENTINEL = { REDIS_SENTINELS: '127.0.0.1:26379', REDIS_SENTINEL_NAME: 'mymaster' };
  const CLUSTER = { REDIS_CLUSTER_NODES: '127.0.0.1:7000' };

  test.each([
    [{ REDIS_URL: URL, ...SENTINEL }, 'REDIS_URL and REDIS_SENTINELS are both set'],
    [{ REDIS_URL: URL, ...CLUSTER }, 'REDIS_URL and REDIS_CLUSTER_NODES are both set'],
    [{ ...SENTINEL, ...CLUSTER }, 'REDIS_SENTINELS and REDIS_CLUSTER_NODES are both set'],
    [
      { REDIS_URL: URL, ...SENTINEL, ...CLUSTER },
      'REDIS_URL, REDIS_SENTINELS and REDIS_CLUSTER_NODES are all set',
    ],
  ])('more than one Redis: %j', (env, names) => {
    expect(() => readConfig(env)).toThrow(
      `${names}: set only one of REDIS_URL (one Redis server), REDIS_SENTINELS (with REDIS_SENTINEL_NAME) or REDIS_CLUSTER_NODES (a Cluster).`,
    );
  });

  test('REDIS_SENTINELS without REDIS_SENTINEL_NAME, and the name without the sentinels', () => {
    for (const name of [undefined, '']) {
      expect(() =>
        readConfig({ REDIS_SENTINELS: '127.0.0.1:26379', REDIS_SENTINEL_NAME: name }),
      ).toThrow(/^REDIS_SENTINELS needs REDIS_SENTINEL_NAME: /);
    }
    expect(() => readConfig({ REDIS_SENTINEL_NAME: 'mymaster' })).toThrow(
      /^REDIS_SENTINEL_NAME is set without REDIS_SENTINELS/,
    );
    expect(() => readConfig({ REDIS_SENTINEL_NAME: 'mymaster', ...CLUSTER })).toThrow(
      /^REDIS_SENTINEL_NAME is set without REDIS_SENTINELS/,
    );
  });

  const MALFORMED = [
    'localhost',
    'localhost:',
    ':7000',
    '127.0.0.1:0',
    '127.0.0.1:65536',
    '127.0.0.1:7000x',
    '127.0.0.1:-1',
    'redis://127.0.0.1:7000',
    '::1:7000',
    '[::1]',
    'a host:7000',
    'user@127.0.0.1:7000',
  ];

  test.each(MALFORMED)('an address that is not host:port: %j', (address) => {
    const sentinelError = (): unknown =>
      readConfig({ REDIS_SENTINELS: `127.0.0.1:26379,${address}`, REDIS_SENTINEL_NAME: 'm' });
    expect(sentinelError).toThrow(/^REDIS_SENTINELS must be comma-separated host:port \(/);
    expect(sentinelError).toThrow(`"${address}" is not a host:port with a port from 1 to 65535.`);
    const clusterError = (): unknown => readConfig({ REDIS_CLUSTER_NODES: address });
    expect(clusterError).toThrow(/^REDIS_CLUSTER_NODES must be comma-separated host:port \(/);
    expect(clusterError).toThrow(`"${address}" is not a host:port`);
  });

  test('a list with no address at all', () => {
    expect(() => readConfig({ REDIS_CLUSTER_NODES: ' , ,' })).toThrow(
      /^REDIS_CLUSTER_NODES must be comma-separated host:port .*; it has no address\.$/,
    );
  });
});

test('PLATFORM_ANSWER_STYLE: oauth by default, errcode or envelope, anything else refused naming it', () => {
  expect(readConfig({}).answerStyle).toBe('oauth');
  expect(readConfig({ PLATFORM_ANSWER_STYLE: 'errcode' }).answerStyle).toBe('errcode');
  expect(readConfig({ PLATFORM_ANSWER_STYLE: 'envelope' }).answerStyle).toBe('envelope');
  expect(() => readConfig({ PLATFORM_ANSWER_STYLE: 'xml' })).toThrow(/PLATFORM_ANSWER_STYLE/);
});
