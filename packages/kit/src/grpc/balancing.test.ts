/**
 * A channel to several replicas (decisions §18): calls spread over all of them, a replica that
 * dies loses its share, its reads in flight are answered by another, and its writes in flight fail
 * with a retryable error instead of running twice.
 */
import { MemberServiceService, UserServiceService } from '@agent-platform/proto/identity/v1/users';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { createLogger } from '../logger.js';
import { GrpcChannel } from './client.js';
import { PrincipalKind, type Principal } from './metadata.js';
import { GrpcServer } from './server.js';

const principal: Principal = { kind: PrincipalKind.KIND_USER, userId: 'usr_01', apiKeyId: '', tenantId: 'tnt_01', role: 'owner', scopes: [] };
const logger = createLogger({ service: 'kit-test', level: 'silent' });

interface Replica {
  readonly name: string;
  readonly port: number;
  /** Calls it answered (or is answering), by method. */
  readonly reads: number;
  readonly writes: number;
  /** While set, its calls wait (as on a slow database), so they are in flight when it dies. */
  hold: boolean;
  /** Resolves once a held call is running on it. */
  holding: Promise<void>;
  /** Resets its connections and refuses new ones, as when its process dies: calls in flight are cut. */
  kill(): Promise<void>;
  /** Kills it in the middle of its next answer (see `MidAnswer`); resolves once it is dead. */
  killMidAnswer(how: MidAnswer): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Where an answer is when its replica dies. `after-headers`: its response headers reached the
 * caller, the message and status never did (grpc-js then counts the call as committed, which its
 * retry policy never repeats). `cancel`: the caller read RST_STREAM(CANCEL) before it noticed the
 * connection was gone, which grpc-js reports as CANCELLED, a status its policy does not retry; Node
 * makes that reset itself when a connection drops under it. `after-message`: the whole answer
 * reached the caller, only its status (OK) did not.
 */
type MidAnswer = 'after-headers' | 'cancel' | 'after-message';

const FRAME_HEADER_BYTES = 9;
const HEADERS_FRAME = 0x1;
const RST_STREAM_FRAME = 0x3;
const NGHTTP2_CANCEL = 0x8;

/**
 * What a server sends, frame by frame (HTTP/2 frames: a 24-bit length, type, flags and stream id,
 * then the payload), so a relay can stop between two frames of one answer.
 */
function framesOf(onFrame: (frame: Buffer) => void): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= FRAME_HEADER_BYTES) {
      const size = FRAME_HEADER_BYTES + pending.readUIntBE(0, 3);
      if (pending.length < size) break;
      onFrame(pending.subarray(0, size));
      pending = pending.subarray(size);
    }
  };
}

function rstStreamCancel(streamId: number): Buffer {
  const frame = Buffer.alloc(FRAME_HEADER_BYTES + 4);
  frame.writeUIntBE(4, 0, 3);
  frame.writeUInt8(RST_STREAM_FRAME, 3);
  frame.writeUInt32BE(streamId, 5);
  frame.writeUInt32BE(NGHTTP2_CANCEL, FRAME_HEADER_BYTES);
  return frame;
}

/**
 * A replica's address as its callers see it: a TCP relay to its server, so that `kill` can reset
 * every connection at once, as the death of its process or host does (a server's own stop
 * would say goodbye first), and `killMidAnswer` can do it between two frames of one answer.
 */
async function relayTo(port: number): Promise<{ port: number; kill(): Promise<void>; killMidAnswer(how: MidAnswer): Promise<void> }> {
  const sockets = new Set<Socket>();
  let armed: { how: MidAnswer; dead: () => void } | undefined;
  const relay = createServer((socket) => {
    const upstream = createConnection(port, '127.0.0.1');
    for (const end of [socket, upstream]) {
      sockets.add(end);
      end.on('error', () => undefined);
      end.on('close', () => sockets.delete(end));
    }
    socket.pipe(upstream);
    // Every stream's first HEADERS frame from the server begins its answer (the second ends it).
    const answering = new Set<number>();
    // The stream whose status (its second HEADERS frame) is the point to die at, for `after-message`.
    let dyingAtStatus: { streamId: number; dead: () => void } | undefined;
    upstream.on(
      'data',
      framesOf((frame) => {
        const streamId = frame.readUInt32BE(5) & 0x7fffffff;
        const isHeaders = frame.readUInt8(3) === HEADERS_FRAME;
        if (isHeaders && dyingAtStatus?.streamId === streamId) {
          const { dead } = dyingAtStatus;
          dyingAtStatus = undefined;
          // As a process that exits after its last answer closes its connection: the answer reaches
          // the caller with a FIN behind it (a reset could discard it unread), the status never does.
          upstream.destroy();
          socket.end();
          void kill(socket).then(dead);
          return;
        }
        const beginsAnswer = isHeaders && !answering.has(streamId);
        if (beginsAnswer) answering.add(streamId);
        if (!beginsAnswer || !armed) {
          socket.write(frame);
          return;
        }
        const { how, dead } = armed;
        armed = undefined;
        if (how === 'after-message') {
          dyingAtStatus = { streamId, dead };
          socket.write(frame);
          return;
        }
        socket.write(how === 'after-headers' ? frame : rstStreamCancel(streamId), () => void kill().then(dead));
      }),
    );
  });
  const closed = new Promise((resolve) => relay.once('close', resolve));
  /** Resets every connection but `ending`, which is closing on its own, and refuses new ones. */
  const kill = async (ending?: Socket) => {
    relay.close();
    for (const socket of sockets) if (socket !== ending) socket.resetAndDestroy();
    await closed;
  };
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    port: (relay.address() as AddressInfo).port,
    kill: () => kill(),
    killMidAnswer: (how) => new Promise((dead) => (armed = { how, dead })),
  };
}

async function startReplica(name: string): Promise<Replica> {
  let reads = 0;
  let writes = 0;
  let reachedHold!: () => void;
  const server = new GrpcServer({ logger });
  const replica: Replica = {
    name,
    port: 0,
    get reads() {
      return reads;
    },
    get writes() {
      return writes;
    },
    hold: false,
    holding: new Promise((resolve) => (reachedHold = resolve)),
    kill: () => Promise.resolve(),
    killMidAnswer: () => Promise.resolve(),
    stop: () => server.stop(500),
  };
  const held = async (signal: AbortSignal) => {
    if (!replica.hold) return;
    reachedHold();
    await new Promise((resolve) => signal.addEventListener('abort', resolve));
  };
  server
    .add('agentplatform.identity.v1.UserService', UserServiceService, {
      getCurrentUser: async (_request, ctx) => {
        reads += 1;
        await held(ctx.signal);
        return { id: name, email: '', fullName: '', isActive: true, createdAt: new Date(0), tenants: [] };
      },
    })
    .add('agentplatform.identity.v1.MemberService', MemberServiceService, {
      listMembers: () => Promise.resolve({ items: [] }),
      addMember: async (request, ctx) => {
        writes += 1;
        await held(ctx.signal);
        return { member: { userId: request.email, email: request.email, fullName: '', role: request.role, createdAt: new Date(0) } };
      },
      updateMember: () => Promise.reject(new DomainError('not_found', 'No such member.')),
      removeMember: () => Promise.resolve({}),
    });
  const relay = await relayTo(await server.listen('127.0.0.1', 0));
  return Object.assign(replica, { port: relay.port, kill: () => relay.kill(), killMidAnswer: (how: MidAnswer) => relay.killMidAnswer(how) });
}

let replicas: Replica[] = [];
let channel: GrpcChannel | undefined;
afterEach(async () => {
  channel?.close();
  await Promise.all(replicas.map((replica) => replica.stop()));
  replicas = [];
});

async function openMesh(count: number) {
  replicas = await Promise.all(Array.from({ length: count }, (_, index) => startReplica(`replica-${index}`)));
  channel = new GrpcChannel(`ipv4:${replicas.map((replica) => `127.0.0.1:${replica.port}`).join(',')}`, { defaultDeadlineMs: 5_000 });
  const users = channel.client(UserServiceService);
  const members = channel.client(MemberServiceService);
  // The first call waits for a connection; round_robin then connects to every address.
  await users.getCurrentUser({}, { principal });
  return { users, members };
}

describe('a channel over several replicas', () => {
  it('sends each call to the next replica, so every replica gets its share', async () => {
    const { users } = await openMesh(3);
    const answeredBy = new Map<string, number>();
    for (let call = 0; call < 90; call += 1) {
      const { id } = await users.getCurrentUser({}, { principal });
      answeredBy.set(id, (answeredBy.get(id) ?? 0) + 1);
    }
    expect([...answeredBy.keys()].sort()).toEqual(['replica-0', 'replica-1', 'replica-2']);
    // Round robin over three ready replicas: a third each, give or take the calls made while the
    // last connections were still opening.
    for (const count of answeredBy.values()) expect(count).toBeGreaterThanOrEqual(20);
  });

  it('answers a read in flight on a replica that dies from another replica, and sends it nothing more', async () => {
    const { users } = await openMesh(3);
    const [doomed, ...survivors] = replicas;
    doomed!.hold = true;
    // Three at once: one of them lands on the replica that holds it.
    const inFlight = Array.from({ length: 3 }, () => users.getCurrentUser({}, { principal }));
    await doomed!.holding;
    await doomed!.kill();
    const answers = await Promise.all(inFlight);
    expect(answers.map((answer) => answer.id)).not.toContain(doomed!.name);

    const readsBefore = doomed!.reads;
    const after = await Promise.all(Array.from({ length: 30 }, () => users.getCurrentUser({}, { principal })));
    expect(after.every((answer) => survivors.some((survivor) => survivor.name === answer.id))).toBe(true);
    expect(doomed!.reads).toBe(readsBefore);
  });

  it.each<MidAnswer>(['after-headers', 'cancel'])('answers a read from another replica when the one it chose dies in the middle of its answer (%s)', async (how) => {
    const { users } = await openMesh(2);
    const [doomed, survivor] = replicas;
    const dead = doomed!.killMidAnswer(how);
    // Round robin: of two reads, one is the doomed replica's.
    const answers = await Promise.all([1, 2].map(() => users.getCurrentUser({}, { principal })));
    await dead;
    expect(answers.map((answer) => answer.id)).toEqual([survivor!.name, survivor!.name]);
  });

  it('answers a write whose replica died after sending the whole answer, before its status, with that answer: it ran once', async () => {
    const { members } = await openMesh(2);
    const [doomed, survivor] = replicas;
    const dead = doomed!.killMidAnswer('after-message');
    // Round robin: of two writes, one is the doomed replica's.
    const answers = await Promise.all(['a', 'b'].map((name) => members.addMember({ email: `${name}@example.com`, role: 'member' }, { principal })));
    await dead;
    expect(answers.map((answer) => answer.member?.userId)).toEqual(['a@example.com', 'b@example.com']);
    expect(doomed!.writes + survivor!.writes).toBe(2);
  });

  it('fails a write in flight on a replica that dies with a retryable error, and never sends it to another', async () => {
    const { members } = await openMesh(2);
    const [doomed, survivor] = replicas;
    doomed!.hold = true;
    const writes: Promise<unknown>[] = [];
    // Writes one after another until one is held by the doomed replica (round robin: the first or second).
    for (let index = 0; doomed!.writes === 0; index += 1) {
      const write = members.addMember({ email: `w${index}@example.com`, role: 'member' }, { principal });
      writes.push(write);
      await Promise.race([write, doomed!.holding]);
    }
    const heldWrite = writes.at(-1)!;
    const survivorWrites = survivor!.writes;
    await doomed!.kill();
    const failure = await heldWrite.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(DomainError);
    expect((failure as DomainError).code).toBe('service_unavailable');
    // The write that may have acted is not repeated elsewhere.
    expect(survivor!.writes).toBe(survivorWrites);
  });
});
