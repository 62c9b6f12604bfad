// A replica lane's round (redis/replica-lanes.ts) on a lane that records what it is sent: the mark
// then WAIT, and nothing at all for a round already answered, so no WAIT nobody awaits blocks it.
import { ReplicaLanes, type Lane } from '../../lib/redis/replica-lanes';

class RecordingLanes extends ReplicaLanes<null> {
  readonly sent: string[][] = [];

  protected async role(): Promise<unknown> {
    return ['master', 0, [['127.0.0.1', '6380', '0']]];
  }

  protected async open(): Promise<Lane> {
    return {
      send: async (args) => {
        this.sent.push(args.map(String));
        return args[0] === 'WAIT' ? 1 : 'OK';
      },
      destroy: () => undefined,
    };
  }
}

test('a lane sends the mark and WAIT for a round still awaited, and nothing for one already answered', async () => {
  const lanes = new RecordingLanes(null, 'app:');
  expect(await lanes.replicas('k:w')).toBe(1);
  expect(await lanes.confirm(0, 'k:w', 1, 2000, 60_000, () => false)).toBe(0);
  expect(lanes.sent).toEqual([]);
  expect(await lanes.confirm(0, 'k:w', 1, 2000, 60_000, () => true)).toBe(1);
  expect(lanes.sent).toEqual([
    ['SET', 'app:k:w', '1', 'PX', '60000'],
    ['WAIT', '1', '2000'],
  ]);
});
