/**
 * deploy/k8s without a cluster: every overlay renders (kubectl kustomize, offline), every object
 * validates against the Kubernetes schema (kubernetes-models), every image is one the Dockerfile
 * builds, every service's configuration loads from what its Deployment provides, and its ports,
 * probes and peer addresses agree with what it listens on.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadAgentMemoryConfig } from '@agent-platform/agent-memory';
import { loadGatewayConfig } from '@agent-platform/gateway';
import { loadIdentityConfig } from '@agent-platform/identity';
import { loadWebhookDispatcherConfig } from '@agent-platform/webhook-dispatcher';
import { loadWorkflowRunnerConfig } from '@agent-platform/workflow-runner';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../e2e/harness/processes.js';

const run = promisify(execFile);
const K8S = join(REPO_ROOT, 'deploy/k8s');

interface Container {
  name: string;
  image: string;
  ports?: { name: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean; capabilities?: { drop?: string[] } };
}
interface Probe {
  grpc?: { port: number };
  httpGet?: { path: string; port: string | number };
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  spec?: {
    template?: { spec: { containers: Container[]; securityContext?: { runAsNonRoot?: boolean } } };
    ports?: { name: string; port: number; targetPort: string | number }[];
  };
}

/** What each platform Deployment runs: its package directory (the Dockerfile's SERVICE) and its configuration loader. */
const PLATFORM: Record<string, { packageDir: string; load: (env: Record<string, string>) => unknown }> = {
  identity: { packageDir: 'services/identity', load: (env) => loadIdentityConfig(env, { requireNats: true }) },
  'agent-memory': { packageDir: 'services/agent-memory', load: (env) => loadAgentMemoryConfig(env, { requireNats: true }) },
  'workflow-runner': { packageDir: 'services/workflow-runner', load: (env) => loadWorkflowRunnerConfig(env, { requireNats: true }) },
  'webhook-dispatcher': { packageDir: 'services/webhook-dispatcher', load: (env) => loadWebhookDispatcherConfig(env) },
  gateway: { packageDir: 'gateway', load: (env) => loadGatewayConfig(env) },
};

async function render(overlay: string): Promise<K8sObject[]> {
  const { stdout } = await run('kubectl', ['kustomize', join(K8S, overlay)], { maxBuffer: 16 * 1024 * 1024 });
  return parseAllDocuments(stdout).map((document) => {
    const object = document.toJS() as K8sObject;
    // kustomize wraps a Secret's long base64 values at 76 columns; the API server ignores the
    // line breaks, the schema's "byte" format does not.
    if (object.kind === 'Secret' && object.data) object.data = Object.fromEntries(Object.entries(object.data).map(([key, value]) => [key, value.replace(/\s/g, '')]));
    return object;
  });
}

/** The prod overlay's Secret is created by the platform team from secrets.example.env's keys. */
async function exampleSecret(): Promise<Record<string, string>> {
  const text = await readFile(join(K8S, 'overlays/prod/secrets.example.env'), 'utf8');
  return Object.fromEntries(text.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#')).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

function secretData(objects: K8sObject[], name: string, fallback: Record<string, string>): Record<string, string> {
  const secret = objects.find((object) => object.kind === 'Secret' && object.metadata.name.startsWith(name));
  if (!secret?.data) return fallback;
  return Object.fromEntries(Object.entries(secret.data).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]));
}

/** The environment a container starts with: its ConfigMaps (envFrom) and its env, secrets resolved. */
function environmentOf(container: Container, objects: K8sObject[], secrets: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const name = source.configMapRef?.name;
    const configMap = objects.find((object) => object.kind === 'ConfigMap' && name !== undefined && object.metadata.name === name);
    expect(configMap, `ConfigMap ${name}`).toBeDefined();
    Object.assign(env, configMap?.data);
  }
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    if (ref) {
      expect(secrets, `secret key ${ref.key} of ${container.name}`).toHaveProperty([ref.key]);
      env[variable.name] = secrets[ref.key]!;
    } else env[variable.name] = variable.value ?? '';
  }
  return env;
}

/** Every `host:port` string in a loaded configuration. */
function hostPorts(value: unknown): string[] {
  if (typeof value === 'string') return /^[a-z0-9.-]+:\d{1,5}$/i.test(value) ? [value] : [];
  if (value instanceof Map) return [...value.values()].flatMap(hostPorts);
  if (value && typeof value === 'object' && !Buffer.isBuffer(value)) return Object.values(value).flatMap(hostPorts);
  return [];
}

function portOf(container: Container, name: string): number | undefined {
  return container.ports?.find((port) => port.name === name)?.containerPort;
}

describe.each(['base', 'overlays/dev', 'overlays/prod'])('deploy/k8s/%s', (overlay) => {
  it('renders, and every object validates against the Kubernetes schema', async () => {
    const objects = await render(overlay);
    expect(objects.length).toBeGreaterThan(0);
    for (const object of objects) {
      const module = (await import(`kubernetes-models/${object.apiVersion}/${object.kind}`)) as Record<string, new (data: unknown) => { validate(): void }>;
      const Model = module[object.kind];
      expect(Model, `${object.apiVersion} ${object.kind}`).toBeDefined();
      expect(() => new Model!(object).validate(), `${object.kind}/${object.metadata.name}`).not.toThrow();
    }
  });

  it('runs every platform part from an image the Dockerfile builds, locked down, with requests and limits', async () => {
    const deployments = (await render(overlay)).filter((object) => object.kind === 'Deployment' && object.metadata.name in PLATFORM);
    expect(deployments.map((deployment) => deployment.metadata.name).sort()).toEqual(Object.keys(PLATFORM).sort());
    for (const deployment of deployments) {
      const pod = deployment.spec!.template!.spec;
      const [container] = pod.containers;
      const { packageDir } = PLATFORM[deployment.metadata.name]!;
      // The image's last path segment is the package directory's: what SERVICE= builds.
      expect(container!.image.split(':')[0]!.split('/').at(-1)).toBe(packageDir.split('/').at(-1));
      expect(existsSync(join(REPO_ROOT, packageDir, 'src/main.ts'))).toBe(true);
      expect(pod.securityContext?.runAsNonRoot).toBe(true);
      expect(container!.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
      expect(container!.resources?.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
      expect(container!.resources?.limits).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    }
  });
});

describe.each(['overlays/dev', 'overlays/prod'])('the services of deploy/k8s/%s', (overlay) => {
  it('load their configuration from what their Deployment provides; ports, probes and peer addresses agree', async () => {
    const objects = await render(overlay);
    const secrets = secretData(objects, 'agent-platform-secrets', await exampleSecret());
    const services = objects.filter((object) => object.kind === 'Service');
    const servicePort = (host: string, port: number) => services.find((service) => service.metadata.name === host)?.spec?.ports?.find((entry) => entry.port === port);
    for (const deployment of objects.filter((object) => object.kind === 'Deployment' && object.metadata.name in PLATFORM)) {
      const name = deployment.metadata.name;
      const container = deployment.spec!.template!.spec.containers[0]!;
      const env = environmentOf(container, objects, secrets);
      let config: unknown;
      expect(() => (config = PLATFORM[name]!.load(env)), `${name}'s configuration`).not.toThrow();

      if (name === 'gateway') {
        const http = portOf(container, 'http');
        expect(http).toBe(Number(env.PORT ?? 8080));
        expect(container.readinessProbe?.httpGet).toMatchObject({ path: '/readyz', port: 'http' });
        expect(container.livenessProbe?.httpGet).toMatchObject({ path: '/healthz', port: 'http' });
      } else {
        const grpc = portOf(container, 'grpc');
        expect(grpc, `${name} listens on GRPC_PORT`).toBe(Number(env.GRPC_PORT));
        expect(container.readinessProbe?.grpc?.port).toBe(grpc);
        expect(container.livenessProbe?.grpc?.port).toBe(grpc);
        expect(servicePort(name, grpc!)?.targetPort).toBe('grpc');
      }
      // Every peer address the part ends up with (defaults included: theirs are loopback) is a
      // Service of these manifests, on the port the peer listens on.
      for (const address of hostPorts(config)) {
        const [host, port] = address.split(':');
        expect(servicePort(host!, Number(port)), `${name} calls ${address}`).toBeDefined();
      }
      if (env.WORKFLOW_INGRESS_URL) {
        const url = new URL(env.WORKFLOW_INGRESS_URL);
        expect(servicePort(url.hostname, Number(url.port))?.targetPort, `${name}: WORKFLOW_INGRESS_URL`).toBe('http');
      }
    }
    const runner = objects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'workflow-runner')!.spec!.template!.spec.containers[0]!;
    expect(portOf(runner, 'http')).toBe(Number(environmentOf(runner, objects, secrets).INGRESS_PORT ?? 50063));
  });
});
