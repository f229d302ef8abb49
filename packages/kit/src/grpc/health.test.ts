import { HealthCheckResponse_ServingStatus as ServingStatus, HealthClient, HealthService } from '@agent-platform/proto/grpc-health/v1';
import { UserServiceService } from '@agent-platform/proto/identity/v1/users';
import { credentials } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { GrpcChannel } from './client.js';
import { GrpcServer } from './server.js';

const USER_SERVICE = 'agentplatform.identity.v1.UserService';

function userServer() {
  return new GrpcServer({ logger: createLogger({ service: 'kit-test', level: 'silent' }) }).add(USER_SERVICE, UserServiceService, {
    getCurrentUser: () => Promise.reject(new Error('not called')),
  });
}

describe('grpc.health.v1 of a GrpcServer', () => {
  it('answers over HTTP/2 and in process from the same statuses', async () => {
    const server = userServer();
    const port = await server.listen('127.0.0.1', 0);
    const network = new GrpcChannel(`127.0.0.1:${port}`, { defaultDeadlineMs: 2_000 }).client({ check: HealthService.check, list: HealthService.list });
    const local = new GrpcChannel(server.inProcess(), { defaultDeadlineMs: 2_000 }).client({ check: HealthService.check });
    try {
      server.health.set(USER_SERVICE, 'NOT_SERVING');
      for (const health of [network, local]) {
        expect(await health.check({ service: '' })).toEqual({ status: ServingStatus.SERVING });
        expect(await health.check({ service: USER_SERVICE })).toEqual({ status: ServingStatus.NOT_SERVING });
        await expect(health.check({ service: 'nope' })).rejects.toMatchObject({ code: 'not_found' });
      }
      expect(await network.list({})).toEqual({
        statuses: { '': { status: ServingStatus.SERVING }, [USER_SERVICE]: { status: ServingStatus.NOT_SERVING } },
      });
    } finally {
      await server.stop(1_000);
    }
  });

  it('tells a Watch SERVING once listening and NOT_SERVING when stopping, and ends it so the stop is not held', async () => {
    const server = userServer();
    const port = await server.listen('127.0.0.1', 0);
    const client = new HealthClient(`127.0.0.1:${port}`, credentials.createInsecure());
    const seen: ServingStatus[] = [];
    const watch = client.watch({ service: USER_SERVICE });
    watch.on('data', (response: { status: ServingStatus }) => seen.push(response.status));
    const ended = new Promise<void>((resolve) => watch.on('status', () => resolve()));
    await expect.poll(() => seen).toEqual([ServingStatus.SERVING]);
    const started = Date.now();
    await server.stop(5_000);
    await ended;
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(seen).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
    client.close();
  });
});
