import { loadLocalConfig } from '@agent-platform/local';
import { describe, expect, it } from 'vitest';

describe('the launcher configuration', () => {
  it('calls the services in process unless GRPC_TRANSPORT says network, and refuses anything else by name', () => {
    expect(loadLocalConfig({}).launcher.GRPC_TRANSPORT).toBe('in-process');
    expect(loadLocalConfig({ GRPC_TRANSPORT: 'network' }).launcher.GRPC_TRANSPORT).toBe('network');
    expect(() => loadLocalConfig({ GRPC_TRANSPORT: 'http2' })).toThrow(/GRPC_TRANSPORT/);
  });

  it('fixes no port but PORT unless told, so a second copy beside the first needs only PORT and DATA_DIR', () => {
    const { launcher } = loadLocalConfig({});
    expect(launcher.PORT).toBe(8080);
    // 54329 when free, else any free port: chosen at start.
    expect(launcher.EMBEDDED_PG_PORT).toBeUndefined();
    const internal = [launcher.IDENTITY_GRPC_PORT, launcher.AGENT_MEMORY_GRPC_PORT, launcher.WEBHOOK_DISPATCHER_GRPC_PORT, launcher.WORKFLOW_RUNNER_GRPC_PORT, launcher.WORKFLOW_INGRESS_PORT];
    expect(internal).toEqual([0, 0, 0, 0, 0]);
    // Metrics are on the gateway's port; METRICS_PORT would add a listener of their own.
    expect(launcher.METRICS_PORT).toBeUndefined();
    expect(loadLocalConfig({ METRICS_PORT: '9470' }).launcher.METRICS_PORT).toBe(9470);
    expect(() => loadLocalConfig({ METRICS_PORT: 'nine' })).toThrow(/METRICS_PORT: must be a port number or "off"/);
  });

  it('lets outbound calls reach private addresses while the API answers on loopback only, unless told otherwise', () => {
    const allowed = (source: Record<string, string>) => {
      const config = loadLocalConfig(source);
      return [config.agentMemory.allowPrivateNetworkUrls, config.webhookDispatcher.allowPrivateNetworkUrls, config.workflowRunner.allowPrivateNetworks];
    };
    expect(allowed({})).toEqual([true, true, true]);
    expect(allowed({ HOST: '::1' })).toEqual([true, true, true]);
    // Others can call an API on every address: the guard stays whole.
    expect(allowed({ HOST: '0.0.0.0' })).toEqual([false, false, false]);
    expect(allowed({ ALLOW_PRIVATE_NETWORK_URLS: 'false' })).toEqual([false, false, false]);
    expect(allowed({ HOST: '0.0.0.0', ALLOW_PRIVATE_NETWORK_URLS: 'true' })).toEqual([true, true, true]);
  });

  it('makes the keys that seal secrets unless given, and refuses a malformed one by name', () => {
    // Absent: the launcher makes each on first start and keeps it in DATA_DIR.
    const { launcher } = loadLocalConfig({});
    expect([launcher.WEBHOOK_SECRET_KEY, launcher.JWT_KEY_ENCRYPTION_KEY, launcher.TOOL_SECRET_KEY]).toEqual([undefined, undefined, undefined]);
    const key = Buffer.alloc(32, 1);
    expect(loadLocalConfig({ TOOL_SECRET_KEY: key.toString('base64') }).launcher.TOOL_SECRET_KEY).toEqual(key);
    expect(() => loadLocalConfig({ TOOL_SECRET_KEY: 'short' })).toThrow(/TOOL_SECRET_KEY: must be the base64 of exactly 32 bytes/);
  });
});
