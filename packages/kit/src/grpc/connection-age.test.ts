/**
 * Servers end a connection at its age (decisions §18.2) with a GOAWAY, and refuse the streams that
 * crossed it; under load a call can cross two. A refused call was processed nowhere, so it is sent
 * again, even a write: none fails, and none runs twice. And the calls still finishing on a
 * connection that received its GOAWAY are not cut by a keepalive ping (grpc-js patched, see
 * patches/@grpc__grpc-js@1.14.7.patch).
 */
import { MemberServiceService } from '@agent-platform/proto/identity/v1/users';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { GrpcChannel } from './client.js';
import { PrincipalKind, type Principal } from './metadata.js';
import { GrpcServer } from './server.js';
import { Http2Transport } from './transport.js';

const principal: Principal = { kind: PrincipalKind.KIND_USER, userId: 'usr_01', apiKeyId: '', tenantId: 'tnt_01', role: 'owner', scopes: [] };
const logger = createLogger({ service: 'kit-test', level: 'silent' });
/** Every write the replicas ran, by its e-mail: each must run once. */
const ran = new Map<string, number>();

function replica(): GrpcServer {
  return new GrpcServer({ logger, maxConnectionAgeMs: 100 }).add('agentplatform.identity.v1.MemberService', MemberServiceService, {
    listMembers: () => Promise.resolve({ items: [] }),
    addMember: async (request) => {
      ran.set(request.email, (ran.get(request.email) ?? 0) + 1);
      // A little work, so that calls are in flight when a connection reaches its age.
      await sleep(3);
      return { member: { userId: request.email, email: request.email, fullName: '', role: request.role, createdAt: new Date(0) } };
    },
    updateMember: () => Promise.resolve({ member: undefined }),
    removeMember: () => Promise.resolve({}),
  });
}

const servers = [replica(), replica()];
let channel: GrpcChannel;
beforeAll(async () => {
  const ports = await Promise.all(servers.map((server) => server.listen('127.0.0.1', 0)));
  channel = new GrpcChannel(`ipv4:${ports.map((port) => `127.0.0.1:${port}`).join(',')}`, { defaultDeadlineMs: 5_000 });
});
afterAll(async () => {
  channel.close();
  await Promise.all(servers.map((server) => server.stop(1_000)));
});

it('sends again the writes that a server refused at its connection age, so none fails and none runs twice', async () => {
  const members = channel.client(MemberServiceService);
  const failures: string[] = [];
  let sent = 0;
  const until = Date.now() + 2_000;
  // Sixteen callers at once for two seconds: about forty connection ages.
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (Date.now() < until) {
        const email = `w${(sent += 1)}@example.com`;
        await members.addMember({ email, role: 'member' }, { principal }).catch((error: unknown) => failures.push(`${email}: ${String((error as Error).cause ?? error)}`));
      }
    }),
  );
  expect(failures).toEqual([]);
  expect(ran.size).toBe(sent);
  expect([...ran.values()].every((count) => count === 1)).toBe(true);
});

it('lets the calls still finishing on a connection past its GOAWAY finish, though a keepalive ping falls due meanwhile', async () => {
  // Calls long enough to be in flight at each GOAWAY (a login's password hash, say), on connections
  // pinged every 100 ms: a ping that grpc-js sent on a closing session was cancelled by Node at
  // once, and grpc-js then ended every call on it "UNAVAILABLE: Connection dropped".
  const slow = new GrpcServer({ logger, maxConnectionAgeMs: 300 }).add('agentplatform.identity.v1.MemberService', MemberServiceService, {
    listMembers: () => Promise.resolve({ items: [] }),
    addMember: async (request) => {
      await sleep(50 + Math.random() * 150);
      return { member: { userId: request.email, email: request.email, fullName: '', role: request.role, createdAt: new Date(0) } };
    },
    updateMember: () => Promise.resolve({ member: undefined }),
    removeMember: () => Promise.resolve({}),
  });
  const port = await slow.listen('127.0.0.1', 0);
  const pinged = new GrpcChannel(new Http2Transport(`127.0.0.1:${port}`, { keepaliveMs: 100 }), { defaultDeadlineMs: 5_000 });
  try {
    const members = pinged.client(MemberServiceService);
    const failures: string[] = [];
    let sent = 0;
    const until = Date.now() + 3_000;
    await Promise.all(
      Array.from({ length: 24 }, async () => {
        while (Date.now() < until) {
          const email = `s${(sent += 1)}@example.com`;
          await members.addMember({ email, role: 'member' }, { principal }).catch((error: unknown) => failures.push(`${email}: ${String((error as Error).cause ?? error)}`));
        }
      }),
    );
    expect(sent).toBeGreaterThan(200);
    expect(failures).toEqual([]);
  } finally {
    pinged.close();
    await slow.stop(1_000);
  }
});
