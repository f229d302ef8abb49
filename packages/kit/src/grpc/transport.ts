import { Client, credentials, status as GrpcStatus, type ChannelInterface, type ChannelOptions, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { idempotentMethods, type MethodName } from '@agent-platform/proto/descriptor-set';
import { once } from 'node:events';
import { toMetadata, type CallHeaders } from './metadata.js';
import { isServiceError, STATUS_DETAILS_KEY } from './status.js';
import type { MessageSink } from './stream.js';
import type { AnyMethod } from './types.js';

/** A server stream as a channel reads it: the messages in order, and a way to stop early. */
export interface CallStream extends AsyncIterable<unknown> {
  cancel(): void;
}

/**
 * A client stream as a channel writes it: its messages (`write` answers a promise while the server
 * is behind), their end, and the server's one answer.
 */
export interface RequestStream extends MessageSink {
  /** No more messages: the server's iteration of them ends. */
  end(): void;
  cancel(): void;
  /** The server's answer; a failure rejects with a grpc-js ServiceError. */
  readonly answer: Promise<unknown>;
}

/**
 * A client stream answered without its messages being read (a refusal, a test's fault): each write
 * waits for that answer, so the caller reads nothing ahead of it.
 */
export function answeredRequestStream(answer: Promise<unknown>): RequestStream {
  const settled = answer.then(
    () => undefined,
    () => undefined,
  );
  return { write: () => settled, end: () => undefined, cancel: () => undefined, answer };
}

/**
 * How a channel's calls reach their server: over HTTP/2 to an address, or straight into a
 * GrpcServer of the same process (`GrpcServer.inProcess()`). Either way the request and the answer
 * are protobuf-encoded and decoded, and a failure rejects with a grpc-js ServiceError, so
 * everything above a transport (deadlines, tracing, error mapping) is the same code. The call's
 * headers become metadata only where they cross a network.
 */
export interface ChannelTransport {
  unary(method: AnyMethod, request: unknown, headers: CallHeaders, deadline: Date): Promise<unknown>;
  serverStream(method: AnyMethod, request: unknown, headers: CallHeaders, deadline: Date): CallStream;
  clientStream(method: AnyMethod, headers: CallHeaders, deadline: Date): RequestStream;
  close(): void;
}

/** A service whose gRPC calls other parts of this process make without the network. */
export interface InProcessServing {
  /** The all-in-one mode's transport to this service (`GrpcServer.inProcess()`). */
  readonly inProcess: ChannelTransport;
}

/**
 * How a call that its replica could not answer (`UNAVAILABLE`: the replica went away, or refused
 * while draining) is tried again on another. Only for the methods the .proto files mark
 * idempotent; a write may already have acted, so its failure goes back to the caller.
 */
const RETRY_POLICY = {
  // Up to 5 (grpc-js's most): under load the dead replica's connection can still look ready to the
  // first retry or two; the back-off (about 0.1 + 0.2 + 0.4 + 0.8 s at most) stays within deadlines.
  maxAttempts: 5,
  initialBackoff: '0.1s',
  maxBackoff: '1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};

/** The idempotent methods (read from the descriptor set once, on the first channel) as the service config names them and as calls' paths. */
let idempotent: { names: MethodName[]; paths: ReadonlySet<string> } | undefined;
function idempotentOnes() {
  if (idempotent) return idempotent;
  const names = idempotentMethods();
  idempotent = { names, paths: new Set(names.map(({ service, method }) => `/${service}/${method}`)) };
  return idempotent;
}

/**
 * A channel to every address its target resolves to, each call sent to the next ready one
 * (`round_robin`): one HTTP/2 connection per replica, so replicas share the calls, not the
 * connections. A target that names one address (`host:port`) is the same with one replica.
 */
let channelOptions: ChannelOptions | undefined;
function balancedChannelOptions(): ChannelOptions {
  channelOptions ??= {
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 10_000,
    'grpc.service_config': JSON.stringify({
      loadBalancingConfig: [{ round_robin: {} }],
      methodConfig: [{ name: idempotentOnes().names, retryPolicy: RETRY_POLICY }],
    }),
    // The policy above is the whole of it: no DNS TXT record may replace it.
    'grpc.service_config_disable_resolution': 1,
    // A replica that went away is looked up again soon, so the one that replaced it is found.
    'grpc.dns_min_time_between_resolutions_ms': 1_000,
    // And reconnected to soon (grpc-js would back off to 2 minutes): a replica restarting is back
    // in the rotation within a second of listening, before its sibling restarts in turn.
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 1_000,
  };
  return channelOptions;
}

/**
 * A grpc-js client to a service's replicas: the distributed mode. `target` is what grpc-js
 * resolves: `host:port`, `dns:///service.namespace:port` (every address of a headless Service),
 * or `ipv4:127.0.0.1:50051,127.0.0.1:50061` (a fixed list, as `pnpm start:mesh` gives).
 */
export class Http2Transport implements ChannelTransport {
  private readonly client: Client;
  private readonly channel: ChannelInterface;

  /** `keepaliveMs`: how often a connection with calls on it is pinged (default 30 s; tests shorten it). */
  constructor(target: string, options: { keepaliveMs?: number } = {}) {
    const keepalive = options.keepaliveMs === undefined ? {} : { 'grpc.keepalive_time_ms': options.keepaliveMs };
    this.client = new Client(target, credentials.createInsecure(), { ...balancedChannelOptions(), ...keepalive });
    this.channel = this.client.getChannel();
  }

  /**
   * A call its server refused without processing it is sent again, whatever the method (see
   * `refusedUnprocessed`), and an idempotent call whose replica died in the middle of its answer is
   * made once more (see `lostMidAnswer`); every other failure is the caller's, as grpc-js's policy
   * left it.
   */
  unary(method: AnyMethod, request: unknown, headers: CallHeaders, deadline: Date): Promise<unknown> {
    return this.unaryOnce(method, request, headers, deadline).catch((error: unknown) => this.recover(method, request, headers, deadline, error, { refusals: 0, lost: false }));
  }

  private async recover(method: AnyMethod, request: unknown, headers: CallHeaders, deadline: Date, error: unknown, tried: { refusals: number; lost: boolean }): Promise<unknown> {
    let next: typeof tried;
    if (tried.refusals < REFUSED_RESENDS && refusedUnprocessed(error, deadline)) next = { ...tried, refusals: tried.refusals + 1 };
    else if (!tried.lost && lostMidAnswer(method, error, deadline)) next = { ...tried, lost: true };
    else throw error;
    return this.unaryOnce(method, request, headers, deadline).catch((again: unknown) => this.recover(method, request, headers, deadline, again, next));
  }

  /**
   * One unary call on the channel itself, below grpc-js's Client: the channel still resolves,
   * balances, retries by the policy and waits for a ready replica, but the Client's layers above it
   * (interceptors this transport has none of, an event emitter per call, a stack trace captured
   * per call for errors) cost a caller 10–19 % of its CPU per call, measured (docs/decisions.md §18.2).
   * Its checks of the answer are the Client's (one message, then OK), but it reads on after the
   * message, so a server that sends two fails the call at once rather than at its deadline.
   */
  private unaryOnce(method: AnyMethod, request: unknown, headers: CallHeaders, deadline: Date): Promise<unknown> {
    return new Promise((resolve, reject) => {
      // Before the call starts: a request that cannot be encoded rejects, and leaves no call open.
      const encoded = method.requestSerialize(request as never);
      const call = this.channel.createCall(method.path, deadline, null, null, null);
      let response: { message: unknown } | undefined;
      call.start(readyMetadata(headers), {
        onReceiveMetadata: () => undefined,
        onReceiveMessage: (answer: Buffer) => {
          if (response) {
            call.cancelWithStatus(GrpcStatus.UNIMPLEMENTED, 'Too many responses received');
            return;
          }
          try {
            response = { message: method.responseDeserialize(answer) };
          } catch (error) {
            call.cancelWithStatus(GrpcStatus.INTERNAL, `Response message parsing error: ${String(error)}`);
            return;
          }
          // Read on to the status: a second message must fail the call now, not hold it to the deadline.
          call.startRead();
        },
        onReceiveStatus: (status: StatusObject) => {
          if (status.code === GrpcStatus.OK) {
            if (response) resolve(response.message);
            else reject(serviceErrorOf({ ...status, code: GrpcStatus.UNIMPLEMENTED, details: 'No message received' }));
          } else if (response && connectionLost(status)) {
            // A unary answer is sent only by a call that succeeded (its OK follows it): the whole
            // answer arrived, and only the connection's end was lost (a replica draining closes it
            // right after its last answer; grpc-js can then report that answer's call as dropped).
            resolve(response.message);
          } else {
            reject(serviceErrorOf(status));
          }
        },
      });
      call.sendMessageWithContext({}, encoded);
      call.halfClose();
      call.startRead();
    });
  }

  serverStream(method: AnyMethod, request: unknown, headers: CallHeaders, deadline: Date): CallStream {
    const { path, serialize, deserialize } = codecOf(method);
    return this.client.makeServerStreamRequest(path, serialize, deserialize, request, readyMetadata(headers), { deadline });
  }

  /**
   * Through grpc-js's Client, whose writable stream buffers up to 16 messages before `write` says
   * to wait for 'drain'; below it, HTTP/2 flow control holds a writer to its reader. (grpc-js also
   * acknowledges the first 256 KiB of a call at once, which it keeps to send again if the call is
   * retried.) No resend here: the messages are gone once written, and a source cannot be read twice.
   */
  clientStream(method: AnyMethod, headers: CallHeaders, deadline: Date): RequestStream {
    const { path, serialize, deserialize } = codecOf(method);
    const { promise: answer, resolve, reject } = Promise.withResolvers<unknown>();
    const call = this.client.makeClientStreamRequest(path, serialize, deserialize, readyMetadata(headers), { deadline }, (error, response) =>
      error ? reject(error) : resolve(response),
    );
    return {
      write: (message) => (call.write(message) ? undefined : once(call, 'drain').then(() => undefined)),
      end: () => call.end(),
      cancel: () => call.cancel(),
      answer,
    };
  }

  close(): void {
    this.client.close();
  }
}

/** grpc-js's words for a stream its server reset with REFUSED_STREAM (it keeps no other mark of it). */
const REFUSED_DETAILS = 'Stream refused by server';
/** How many times this transport sends a refused call again; grpc-js has sent it twice by then. */
const REFUSED_RESENDS = 3;

/**
 * Whether the call's server refused its stream: REFUSED_STREAM says it processed nothing of it
 * (RFC 9113 §8.7), so even a write may be sent again. A server whose connection reaches its age, or
 * that drains, refuses the streams that crossed its GOAWAY; under load a call can cross two such
 * GOAWAYs, and grpc-js sends a refused call again only once: writes failed 503 that way
 * (connection-age.test.ts).
 */
function refusedUnprocessed(error: unknown, deadline: Date): boolean {
  return isServiceError(error) && error.code === GrpcStatus.UNAVAILABLE && error.details === REFUSED_DETAILS && Date.now() < deadline.getTime();
}

/**
 * Whether an idempotent call failed because its connection went away while its replica answered,
 * which grpc-js's retry policy does not repeat: once the response headers arrive, the call is
 * committed (gRFC A6), and a connection that drops after them ends it `UNAVAILABLE` for good; and a
 * stream reset that Node makes from a dropping connection can reach grpc-js first, as `CANCELLED`.
 * Either is the transport's status, never a server's answer (ours carry their reason in the
 * details trailer), and no caller cancels a unary call, so for a method without side effects it
 * says only that the replica is gone: calling again (within the deadline) reaches a live one.
 */
function lostMidAnswer(method: AnyMethod, error: unknown, deadline: Date): boolean {
  return isServiceError(error) && connectionLost(error) && Date.now() < deadline.getTime() && idempotentOnes().paths.has(method.path);
}

/** A status the transport made because the connection went away (ours, from a server, carry their reason in the details trailer). */
function connectionLost(status: StatusObject): boolean {
  return (status.code === GrpcStatus.UNAVAILABLE || status.code === GrpcStatus.CANCELLED) && status.metadata.get(STATUS_DETAILS_KEY).length === 0;
}

/**
 * The call's headers as metadata, marked `waitForReady`: a call made while no replica is ready
 * (one restarting, its sibling not yet reconnected) waits for one, within its deadline, instead of
 * failing at once. It has not been sent, so waiting is safe for writes too; a service that stays
 * down still fails by the deadline.
 */
function readyMetadata(headers: CallHeaders) {
  const metadata = toMetadata(headers);
  metadata.setOptions({ waitForReady: true });
  return metadata;
}

/** A failed status as grpc-js's Client reports it: an Error that is also the status. */
function serviceErrorOf(status: StatusObject): ServiceError {
  return Object.assign(new Error(`${status.code} ${GrpcStatus[status.code]}: ${status.details}`), status);
}

function codecOf(method: AnyMethod) {
  return { path: method.path, serialize: (value: unknown) => method.requestSerialize(value as never), deserialize: method.responseDeserialize };
}
