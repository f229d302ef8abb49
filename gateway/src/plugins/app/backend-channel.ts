import { GrpcChannel, type ChannelTransport } from '@agent-platform/kit/grpc';
import type { FastifyInstance } from 'fastify';

/** What the launcher may hand a backend's client plugin: its service in this very process. */
export interface BackendPluginOptions {
  transport?: ChannelTransport | undefined;
}

/**
 * The channel to one backend, closed with the app: through the in-process transport when the
 * all-in-one launcher gave one, otherwise HTTP/2 to the configured address.
 */
export function openBackendChannel(app: FastifyInstance, options: BackendPluginOptions, address: string): GrpcChannel {
  const channel = new GrpcChannel(options.transport ?? address, { defaultDeadlineMs: app.config.GRPC_DEADLINE_MS });
  app.addHook('onClose', (_instance, next) => {
    channel.close();
    next();
  });
  return channel;
}
