import { loadLocalConfig } from '@agent-platform/local';
import { describe, expect, it } from 'vitest';

describe('the launcher configuration', () => {
  it('calls the services in process unless GRPC_TRANSPORT says network, and refuses anything else by name', () => {
    expect(loadLocalConfig({}).launcher.GRPC_TRANSPORT).toBe('in-process');
    expect(loadLocalConfig({ GRPC_TRANSPORT: 'network' }).launcher.GRPC_TRANSPORT).toBe('network');
    expect(() => loadLocalConfig({ GRPC_TRANSPORT: 'http2' })).toThrow(/GRPC_TRANSPORT/);
  });
});
