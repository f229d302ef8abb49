import { AsyncLocalStorage } from 'node:async_hooks';
import { context, trace, TraceFlags } from '@opentelemetry/api';
import { HealthClient, HealthCheckResponse_ServingStatus, HealthService } from '@agent-platform/proto/grpc-health/v1';
import { AuthServiceService } from '@agent-platform/proto/identity/v1/auth';
import { MemberServiceService, UserServiceService } from '@agent-platform/proto/identity/v1/users';
import { credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { createLogger } from '../logger.js';
import { startTelemetry } from '../telemetry/index.js';
import { GrpcChannel } from './client.js';
import { PrincipalKind, type Principal } from './metadata.js';
import { GrpcServer, requirePrincipal } from './server.js';

const principal: Principal = {
  kind: PrincipalKind.KIND_USER,
  userId: 'usr_01',
  apiKeyId: '',
  tenantId: 'tnt_01',
  role: 'owner',
  scopes: [],
};

await startTelemetry({ serviceName: 'kit-test' });
/** Stands for the async context a caller runs in (a MikroORM transaction, say). */
const callerContext = new AsyncLocalStorage<string>();
const server = new GrpcServer({ logger: createLogger({ service: 'kit-test', level: 'silent' }) });
let address: string;

beforeAll(async () => {
  server
    .add('agentplatform.identity.v1.UserService', UserServiceService, {
      getCurrentUser: (_request, ctx) => {
        const caller = requirePrincipal(ctx);
        if (caller.userId === 'context-probe') return Promise.resolve({ id: callerContext.getStore() ?? 'no caller context', email: '', fullName: '', isActive: true, createdAt: new Date(0), tenants: [] });
        const traceId = trace.getActiveSpan()?.spanContext().traceId ?? '';
        return Promise.resolve({
          id: caller.userId,
          email: `${caller.role}@${caller.tenantId}`,
          fullName: traceId,
          isActive: true,
          createdAt: new Date('2026-01-02T03:04:05.006Z'),
          tenants: [{ id: caller.tenantId, name: ctx.requestId ?? '', role: caller.role }],
        });
      },
    })
    .add('agentplatform.identity.v1.MemberService', MemberServiceService, {
      listMembers: () => Promise.reject(DomainError.validation([{ field: 'role', message: 'Unknown role.' }])),
      addMember: () => Promise.reject(new Error('database password is hunter2')),
      updateMember: (_request, ctx) =>
        new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted')))),
      removeMember: () => Promise.reject(new DomainError('rate_limit_exceeded', 'Slow down.', { retryAfter: 7 })),
    });
  const port = await server.listen('127.0.0.1', 0);
  address = `127.0.0.1:${port}`;
});

afterAll(async () => {
  await server.stop(1_000);
});

// Every behaviour a caller relies on, over the network and through the in-process transport alike.
const transports = [
  { transport: 'HTTP/2', open: () => new GrpcChannel(address, { defaultDeadlineMs: 2_000 }) },
  { transport: 'the in-process transport', open: () => new GrpcChannel(server.inProcess(), { defaultDeadlineMs: 2_000 }) },
];

describe.each(transports)('GrpcServer and GrpcChannel over $transport', ({ open }) => {
  let channel: GrpcChannel;
  beforeAll(() => {
    channel = open();
  });
  afterAll(() => channel.close());

  it('carries the principal, request id and answer across the wire', async () => {
    const users = channel.client(UserServiceService);
    const me = await users.getCurrentUser({}, { principal, requestId: 'req-42' });
    expect(me.id).toBe('usr_01');
    expect(me.email).toBe('owner@tnt_01');
    expect(me.createdAt).toEqual(new Date('2026-01-02T03:04:05.006Z'));
    expect(me.tenants).toEqual([{ id: 'tnt_01', name: 'req-42', role: 'owner' }]);
  });

  it('answers unauthorized when a principal is required and missing', async () => {
    const users = channel.client(UserServiceService);
    await expect(users.getCurrentUser({})).rejects.toMatchObject({ code: 'unauthorized' });
  });

  it('propagates the caller trace context to the handler', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const remote = trace.setSpanContext(context.active(), { traceId, spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED, isRemote: true });
    const users = channel.client(UserServiceService);
    const me = await context.with(remote, () => users.getCurrentUser({}, { principal }));
    expect(me.fullName).toBe(traceId);
  });

  it('turns a DomainError into the same DomainError on the client, field violations included', async () => {
    const members = channel.client(MemberServiceService);
    const error = await members.listMembers({}, { principal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'validation_error', message: 'The request did not pass validation.', details: [{ field: 'role', message: 'Unknown role.' }] });
    await expect(members.removeMember({ userId: 'x' }, { principal })).rejects.toMatchObject({ code: 'rate_limit_exceeded', retryAfter: 7 });
  });

  it('masks unexpected errors as internal_error without internals', async () => {
    const members = channel.client(MemberServiceService);
    const error = await members.addMember({ email: 'a@b.c', role: 'member' }, { principal }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'internal_error' });
    expect((error as Error).message).not.toContain('hunter2');
  });

  it('enforces the deadline and aborts the handler', async () => {
    const members = channel.client(MemberServiceService);
    const started = Date.now();
    await expect(members.updateMember({ userId: 'u', role: 'member' }, { principal, deadlineMs: 200 })).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('answers Check of grpc.health.v1 for the server and each service', async () => {
    const health = channel.client({ check: HealthService.check });
    expect(await health.check({ service: '' })).toEqual({ status: HealthCheckResponse_ServingStatus.SERVING });
    expect(await health.check({ service: 'agentplatform.identity.v1.MemberService' })).toEqual({ status: HealthCheckResponse_ServingStatus.SERVING });
    await expect(health.check({ service: 'nope' })).rejects.toMatchObject({ code: 'not_found' });
  });

  it("runs the handler in the server's async context, not the caller's", async () => {
    const users = channel.client(UserServiceService);
    const me = await callerContext.run('the caller', () => users.getCurrentUser({}, { principal: { ...principal, userId: 'context-probe' } }));
    expect(me.id).toBe('no caller context');
  });

  it('refuses a method the server does not implement', async () => {
    const auth = channel.client(AuthServiceService);
    await expect(auth.getJwks({})).rejects.toMatchObject({ code: 'internal_error' });
  });
});

describe('GrpcServer over HTTP/2', () => {
  it('answers service_unavailable when nothing listens', async () => {
    const dead = new GrpcChannel('127.0.0.1:1', { defaultDeadlineMs: 500 });
    await expect(dead.client(UserServiceService).getCurrentUser({}, { principal })).rejects.toMatchObject({ code: 'service_unavailable' });
    dead.close();
  });

  it('serves grpc.health.v1 for the server and each service', async () => {
    const health = new HealthClient(address, credentials.createInsecure());
    const check = (service: string) =>
      new Promise<number>((resolve, reject) =>
        health.check({ service }, (error, response) => (error ? reject(error) : resolve(response.status))),
      );
    expect(await check('')).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect(await check('agentplatform.identity.v1.UserService')).toBe(HealthCheckResponse_ServingStatus.SERVING);
    await expect(check('nope')).rejects.toMatchObject({ code: 5 });
    health.close();
  });
});

describe('GrpcServer in process', () => {
  const principalCall = { principal };

  /** A server whose getCurrentUser answers when `release` is called (or never). */
  function pausedServer() {
    let release: () => void = () => undefined;
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (started = resolve));
    const paused = new GrpcServer({ logger: createLogger({ service: 'kit-test', level: 'silent' }) }).add('agentplatform.identity.v1.UserService', UserServiceService, {
      getCurrentUser: () => {
        started();
        return new Promise((resolve) => {
          release = () => resolve({ id: 'usr_late', email: 'late@example.com', fullName: '', isActive: true, createdAt: new Date(0), tenants: [] });
        });
      },
    });
    return { paused, running, release: () => release() };
  }

  it('takes calls only while the server listens, as its port does', async () => {
    const { paused, running, release } = pausedServer();
    const users = new GrpcChannel(paused.inProcess(), { defaultDeadlineMs: 2_000 }).client(UserServiceService);
    await expect(users.getCurrentUser({}, principalCall)).rejects.toMatchObject({ code: 'service_unavailable' });
    await paused.listen('127.0.0.1', 0);
    const answer = users.getCurrentUser({}, principalCall);
    await running;
    release();
    expect(await answer).toMatchObject({ id: 'usr_late' });
    await paused.stop(1_000);
    await expect(users.getCurrentUser({}, principalCall)).rejects.toMatchObject({ code: 'service_unavailable' });
  });

  it('lets a running call finish while it stops, and refuses new ones meanwhile', async () => {
    const { paused, running, release } = pausedServer();
    await paused.listen('127.0.0.1', 0);
    const users = new GrpcChannel(paused.inProcess(), { defaultDeadlineMs: 2_000 }).client(UserServiceService);
    const answer = users.getCurrentUser({}, principalCall);
    await running;
    const settled: string[] = [];
    const stopped = paused.stop(5_000).then(() => settled.push('stopped'));
    void answer.then(() => settled.push('answered'));
    await expect(users.getCurrentUser({}, principalCall)).rejects.toMatchObject({ code: 'service_unavailable' });
    release();
    expect(await answer).toMatchObject({ id: 'usr_late' });
    await stopped;
    expect(settled).toEqual(['answered', 'stopped']);
  });

  it('cuts a call still running when the grace period ends', async () => {
    const { paused, running } = pausedServer();
    await paused.listen('127.0.0.1', 0);
    const users = new GrpcChannel(paused.inProcess(), { defaultDeadlineMs: 30_000 }).client(UserServiceService);
    const answer = users.getCurrentUser({}, principalCall).catch((error: unknown) => error);
    await running;
    await paused.stop(50);
    expect(await answer).toMatchObject({ code: 'service_unavailable' });
  });
});
