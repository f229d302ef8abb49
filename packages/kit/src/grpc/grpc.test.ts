import { context, trace, TraceFlags } from '@opentelemetry/api';
import { HealthClient, HealthCheckResponse_ServingStatus } from '@agent-platform/proto/grpc-health/v1';
import { MemberServiceService, UserServiceService } from '@agent-platform/proto/identity/v1/users';
import { credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { createLogger } from '../logger.js';
import { startTelemetry } from '../telemetry.js';
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

startTelemetry({ serviceName: 'kit-test' });
const server = new GrpcServer({ logger: createLogger({ service: 'kit-test', level: 'silent' }) });
let channel: GrpcChannel;
let address: string;

beforeAll(async () => {
  server
    .add('agentplatform.identity.v1.UserService', UserServiceService, {
      getCurrentUser: (_request, ctx) => {
        const caller = requirePrincipal(ctx);
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
  channel = new GrpcChannel(address, { defaultDeadlineMs: 2_000 });
});

afterAll(async () => {
  channel.close();
  await server.stop(1_000);
});

describe('GrpcServer and GrpcChannel', () => {
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
