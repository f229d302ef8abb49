/**
 * The price of one hop of the mesh, without the platform's work: two processes run as replicas are
 * (compiled kit, the telemetry hook, the image's V8 flags; started by `startHop` in load.ts).
 *  - `callee`: a kit GrpcServer whose UserService.GetCurrentUser answers a fixed profile;
 *  - `caller <callee port>`: a Fastify server whose GET /local answers that profile itself and
 *    GET /hop asks the callee for it through a kit GrpcChannel, as the gateway asks identity for
 *    GET /auth/me (the same message, principal, deadline, retry policy, spans and metrics).
 * The two routes differ by the hop alone: the gRPC client and server, HTTP/2 and protobuf, the
 * socket between them, and a second process to wake.
 * Prints `listening <port>` once it answers; stops on SIGINT/SIGTERM.
 */
import { createLogger } from '@agent-platform/kit';
import { GrpcChannel, GrpcServer, platformPrincipal } from '@agent-platform/kit/grpc';
import { UserServiceService, type GetCurrentUserResponse } from '@agent-platform/proto/identity/v1/users';
import Fastify from 'fastify';

const PROFILE = {
  id: 'usr_bench',
  email: 'bench@example.com',
  fullName: 'Bench User',
  isActive: true,
  createdAt: new Date('2026-01-01T00:00:00Z'),
  tenants: [{ id: 'ten_bench', name: 'Bench', role: 'owner' }],
};

const [role, calleePort] = process.argv.slice(2);
let stop: () => Promise<void>;
let port: number;

if (role === 'callee') {
  const server = new GrpcServer({ logger: createLogger({ service: 'hop-callee', level: 'warn' }) }).add('agentplatform.identity.v1.UserService', UserServiceService, {
    getCurrentUser: () => Promise.resolve(PROFILE),
  });
  port = await server.listen('127.0.0.1', 0);
  stop = () => server.stop(1_000);
} else if (role === 'caller' && calleePort) {
  const users = new GrpcChannel(`127.0.0.1:${calleePort}`).client(UserServiceService);
  const principal = platformPrincipal({ userId: PROFILE.id, tenantId: PROFILE.tenants[0]!.id }, 'member');
  const asJson = (user: GetCurrentUserResponse) => ({
    id: user.id,
    email: user.email,
    full_name: user.fullName,
    is_active: user.isActive,
    created_at: user.createdAt?.toISOString(),
    tenants: user.tenants,
  });
  const app = Fastify();
  app.get('/local', () => asJson(PROFILE));
  app.get('/hop', async (request) => asJson(await users.getCurrentUser({}, { principal, requestId: request.id })));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
  stop = () => app.close();
} else {
  throw new Error('usage: hop-server.ts callee | caller <callee port>');
}
console.log(`listening ${port}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void stop().then(() => process.exit(0)));
