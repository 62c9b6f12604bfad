// Durable before answered (docs/durability.md): waits until a replica holds the writes a login
// depends on. Writes that finish while a wait is under way share the next one (group commit), on
// a few connections of their own per master, so a wait never holds up another request's commands
// and many writes cost one WAIT.
import type { ReplicaLink } from '../redis/replica-lanes';
import { deadlineTimer } from '../util/deadline-timer';
import { ignore } from '../util/ignore';
import {
  LANE_READY_MS,
  LANES,
  MARK_TTL_MS,
  NO_REPLICA_RECHECK_MS,
  ROUND_MARGIN_MS,
} from './windows';

/** How a wait for replicas ended. */
export type ReplicaWaitOutcome =
  /** The replicas asked for (or every connected one, when fewer) acknowledged. */
  | 'acknowledged'
  /** The master has no replica: nothing to wait for. */
  | 'no-replica'
  /** Fewer replicas acknowledged within the timeout; the write is on the master only. */
  | 'timeout'
  /** The connection failed or the server was no master: the write may be lost with it. */
  | 'failed';

/** Whether a replica holds the write, or there is none to hold it. */
export const held = (outcome: ReplicaWaitOutcome): boolean =>
  outcome === 'acknowledged' || outcome === 'no-replica';

export interface ReplicaWaitSettings {
  /** Replicas that must acknowledge (at most the connected ones). */
  replicas: number;
  /** Longest WAIT, milliseconds. */
  timeoutMs: number;
}

interface Round {
  markKey: string;
  promise: Promise<ReplicaWaitOutcome>;
  resolve(outcome: ReplicaWaitOutcome): void;
}

interface Master {
  busy: Set<number>;
  /** The round the next writes join: not started yet, so its mark comes after their writes. */
  next: Round | undefined;
  noReplicaUntil: number;
}

export class ReplicaAcks {
  readonly #masters = new Map<string, Master>();
  #replicated: boolean | undefined;

  constructor(
    private readonly link: ReplicaLink,
    private readonly settings: ReplicaWaitSettings,
    private readonly onWait: (outcome: ReplicaWaitOutcome, durationMs: number) => void,
  ) {}

  /**
   * Resolves once a replica holds every write this process saw completed on `markKey`'s master
   * before the call (the mark is written after them, beside `markKey`). Never rejects.
   */
  confirm(markKey: string): Promise<ReplicaWaitOutcome> {
    const route = this.link.routeOf(markKey);
    let master = this.#masters.get(route);
    if (master === undefined) {
      master = { busy: new Set(), next: undefined, noReplicaUntil: 0 };
      this.#masters.set(route, master);
    }
    if (master.noReplicaUntil > Date.now()) return Promise.resolve('no-replica');
    if (master.next !== undefined) return master.next.promise;
    let resolve!: (outcome: ReplicaWaitOutcome) => void;
    const promise = new Promise<ReplicaWaitOutcome>((settle) => (resolve = settle));
    const round: Round = { markKey, promise, resolve };
    master.next = round;
    const lane = this.#freeLane(master);
    if (lane !== undefined) this.#start(master, round, lane);
    return promise;
  }

  /**
   * Whether a primary ever had a replica connected (ROLE), `undefined` before the first answer:
   * where none ever had one, no failover can lose a write.
   */
  get replicated(): boolean | undefined {
    return this.#replicated;
  }

  /**
   * ROLE, then (with a replica connected) the mark and WAIT for as many as are connected, at most
   * those asked; `opening()` is called once ROLE has answered, `sending()` as the WAIT is sent
   * (ReplicaLink.confirm).
   */
  async #round(
    markKey: string,
    lane: number,
    opening: () => void,
    sending: () => boolean,
  ): Promise<ReplicaWaitOutcome> {
    const connected = await this.link.replicas(markKey);
    this.#replicated = this.#replicated === true || connected > 0;
    if (connected === 0) return 'no-replica';
    opening();
    const wanted = Math.min(this.settings.replicas, connected);
    const acknowledged = await this.link.confirm(
      lane,
      markKey,
      wanted,
      this.settings.timeoutMs,
      MARK_TTL_MS,
      sending,
    );
    return acknowledged >= wanted ? 'acknowledged' : 'timeout';
  }

  #freeLane(master: Master): number | undefined {
    for (let lane = 0; lane < LANES; lane += 1) if (!master.busy.has(lane)) return lane;
    return undefined;
  }

  #start(master: Master, round: Round, lane: number): void {
    master.next = undefined;
    master.busy.add(lane);
    const startedAt = Date.now();
    let cancel = (): void => undefined;
    let over = false;
    let laneOpening = false;
    let giveUp!: (outcome: ReplicaWaitOutcome) => void;
    const late = new Promise<ReplicaWaitOutcome>((resolve) => (giveUp = resolve));
    // A master that does not answer ROLE, or a WAIT, in time has gone away: `failed`. A lane still
    // opening then (a new connection, slow on a loaded machine) says nothing of the master: the
    // writes are on it, unacknowledged, as after a WAIT's own timeout (docs/durability.md).
    const deadline = (ms: number): void => {
      cancel();
      cancel = deadlineTimer(() => {
        over = true;
        giveUp(laneOpening ? 'timeout' : 'failed');
      }, ms);
    };
    deadline(LANE_READY_MS);
    const asked = this.#round(
      round.markKey,
      lane,
      () => (laneOpening = true),
      () => {
        if (over) return false;
        laneOpening = false;
        deadline(this.settings.timeoutMs + ROUND_MARGIN_MS);
        return true;
      },
    );
    asked.catch(ignore);
    Promise.race([asked, late])
      .then((outcome) => {
        if (outcome === 'no-replica') master.noReplicaUntil = Date.now() + NO_REPLICA_RECHECK_MS;
        return outcome;
      })
      .catch((): ReplicaWaitOutcome => 'failed')
      .then((outcome) => {
        over = true;
        cancel();
        master.busy.delete(lane);
        this.onWait(outcome, Date.now() - startedAt);
        round.resolve(outcome);
        if (master.next !== undefined) this.#start(master, master.next, lane);
      })
      .catch(ignore);
  }
}
