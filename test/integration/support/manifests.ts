/** deploy/k8s rendered offline, and what the tests read of it. */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadAgentMemoryConfig } from '@agent-platform/agent-memory';
import { loadGatewayConfig } from '@agent-platform/gateway';
import { loadIdentityConfig } from '@agent-platform/identity';
import { loadWebhookDispatcherConfig } from '@agent-platform/webhook-dispatcher';
import { loadWorkflowRunnerConfig } from '@agent-platform/workflow-runner';
import { expect } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../../e2e/harness/processes.js';

const run = promisify(execFile);
export const K8S = join(REPO_ROOT, 'deploy/k8s');

export interface Container {
  name: string;
  image: string;
  command?: string[];
  volumeMounts?: { name: string; mountPath: string }[];
  ports?: { name: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean; capabilities?: { drop?: string[] } };
}
export interface Probe {
  grpc?: { port: number };
  httpGet?: { path: string; port: string | number };
}
export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: { name: string; emptyDir?: object }[];
  securityContext?: { runAsNonRoot?: boolean };
  terminationGracePeriodSeconds?: number;
}
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  spec?: {
    template?: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec };
    selector?: Record<string, string>;
    ports?: { name: string; port: number; targetPort: string | number }[];
    /** A Service's; `None` makes it headless. */
    clusterIP?: string;
  };
}

/** What each platform Deployment runs: its package directory (the Dockerfile's SERVICE) and its configuration loader. */
export const PLATFORM: Record<string, { packageDir: string; load: (env: Record<string, string>) => unknown }> = {
  identity: { packageDir: 'services/identity', load: (env) => loadIdentityConfig(env, { requireNats: true }) },
  'agent-memory': { packageDir: 'services/agent-memory', load: (env) => loadAgentMemoryConfig(env, { requireNats: true }) },
  'workflow-runner': { packageDir: 'services/workflow-runner', load: (env) => loadWorkflowRunnerConfig(env, { requireNats: true }) },
  'webhook-dispatcher': { packageDir: 'services/webhook-dispatcher', load: (env) => loadWebhookDispatcherConfig(env) },
  gateway: { packageDir: 'gateway', load: (env) => loadGatewayConfig(env) },
};

export async function render(overlay: string): Promise<K8sObject[]> {
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
export async function exampleSecret(): Promise<Record<string, string>> {
  const text = await readFile(join(K8S, 'overlays/prod/secrets.example.env'), 'utf8');
  return Object.fromEntries(text.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#')).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

export function secretData(objects: K8sObject[], name: string, fallback: Record<string, string>): Record<string, string> {
  const secret = objects.find((object) => object.kind === 'Secret' && object.metadata.name.startsWith(name));
  if (!secret?.data) return fallback;
  return Object.fromEntries(Object.entries(secret.data).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]));
}

/** The environment a container starts with: its ConfigMaps (envFrom) and its env, secrets resolved. */
export function environmentOf(container: Container, objects: K8sObject[], secrets: Record<string, string>): Record<string, string> {
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
      // An optional key the Secret lacks leaves the variable unset, as Kubernetes does.
      if (ref.optional === true && !(ref.key in secrets)) continue;
      expect(secrets, `secret key ${ref.key} of ${container.name}`).toHaveProperty([ref.key]);
      env[variable.name] = secrets[ref.key]!;
    } else env[variable.name] = variable.value ?? '';
  }
  return env;
}

export const isDeployment = (object: K8sObject) => object.kind === 'Deployment';
export const podOf = (deployment: K8sObject) => deployment.spec!.template!.spec;
