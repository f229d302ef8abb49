import type { Handlers } from '@agent-platform/kit/grpc';
import type { UserServiceService } from '@agent-platform/proto/identity/v1/users';
import { actorOf } from '@agent-platform/kit/grpc';
import type { UsersService } from './users.service.js';

export const USER_SERVICE_NAME = 'agentplatform.identity.v1.UserService';

/** UserService over gRPC: the calling user as GET /auth/me shows them. */
export function userHandlers(users: UsersService): Handlers<typeof UserServiceService> {
  return {
    getCurrentUser: async (_request, ctx) => {
      const { id, email, fullName, isActive, createdAt, tenants } = await users.getCurrentUser(actorOf(ctx));
      return { id, email, fullName, isActive, createdAt, tenants };
    },
  };
}
