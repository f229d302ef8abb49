/**
 * deploy/k8s without a cluster: every overlay renders (kubectl kustomize, offline), every object
 * validates against the Kubernetes schema (kubernetes-models), every image is one the Dockerfile
 * builds, every service's configuration loads from what its Deployment provides, and its ports,
 * probes and peer addresses agree with what it listens on. The Tiltfile's checks are in tilt.test.ts.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadDrain } from '@agent-platform/kit';
import { metricsAddressFrom } from '@agent-platform/kit/telemetry';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../e2e/harness/processes.js';
import { environmentOf, exampleSecret, PLATFORM, render, secretData, type Container } from './support/manifests.js';

/** Every gRPC target (`host:port` or `dns:///host:port`) in a loaded configuration. */
function grpcTargets(value: unknown): string[] {
  if (typeof value === 'string') return /^(dns:\/\/\/)?[a-z0-9.-]+:\d{1,5}$/i.test(value) ? [value] : [];
  if (value instanceof Map) return [...value.values()].flatMap(grpcTargets);
  if (value && typeof value === 'object' && !Buffer.isBuffer(value)) return Object.values(value).flatMap(grpcTargets);
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
      // KEDA's kinds come with their own models package, validated the same way.
      const models = object.apiVersion.startsWith('keda.sh/') ? '@kubernetes-models/keda' : 'kubernetes-models';
      const module = (await import(`${models}/${object.apiVersion}/${object.kind}`)) as Record<string, new (data: unknown) => { validate(): void }>;
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

  it('gives the platform write access to emptyDirs only: /tmp, and in dev the room live_update needs', async () => {
    const deployments = (await render(overlay)).filter((object) => object.kind === 'Deployment' && object.metadata.name in PLATFORM);
    for (const deployment of deployments) {
      const pod = deployment.spec!.template!.spec;
      const mounts = pod.containers[0]!.volumeMounts ?? [];
      expect(pod.volumes?.every((volume) => volume.emptyDir !== undefined), deployment.metadata.name).toBe(true);
      if (overlay === 'overlays/dev') {
        expect(mounts.map((mount) => mount.mountPath).sort()).toEqual(['/live', '/tmp']);
        expect(pod.initContainers?.map((init) => init.securityContext)).toEqual([expect.objectContaining({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false })]);
      } else {
        expect(mounts.map((mount) => mount.mountPath)).toEqual(['/tmp']);
        expect(pod.initContainers).toBeUndefined();
      }
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
      // The kubelet's SIGKILL comes after the drain (decisions §18.3) and 5 s to release pools and telemetry.
      const drain = loadDrain(env);
      expect(drain.delayMs, `${name} keeps serving while kube-proxy and the ingress take it out`).toBeGreaterThan(0);
      expect((deployment.spec!.template!.spec.terminationGracePeriodSeconds ?? 30) * 1_000, `${name}: terminationGracePeriodSeconds`).toBeGreaterThanOrEqual(drain.delayMs + drain.graceMs + 5_000);

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
      // Prometheus finds /metrics where the telemetry hook serves it (metricsAddressFrom).
      const metrics = metricsAddressFrom({ ...env, METRICS_HOST: '0.0.0.0' });
      expect(portOf(container, 'metrics'), `${name} serves /metrics`).toBe(metrics?.port);
      expect(deployment.spec!.template!.metadata.annotations).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(metrics?.port), 'prometheus.io/path': '/metrics' });
      // Every peer the part ends up with (defaults included: theirs are loopback) is a headless
      // Service of these manifests, on the port the peer listens on, resolved by grpc-js's DNS
      // resolver: each replica's address, so calls spread over them (decisions §18).
      for (const target of grpcTargets(config)) {
        expect(target, `${name} resolves every replica of its peer`).toMatch(/^dns:\/\/\//);
        const [host, port] = target.slice('dns:///'.length).split(':');
        expect(servicePort(host!, Number(port)), `${name} calls ${target}`).toBeDefined();
        expect(services.find((service) => service.metadata.name === host)?.spec?.clusterIP, `${host} is headless`).toBe('None');
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

describe('deploy/k8s/overlays/prod autoscaling', () => {
  it('scales workflow-runner and webhook-dispatcher with KEDA on their backlog, and no other autoscaler targets them', async () => {
    const objects = await render('overlays/prod');
    const scaled = objects.filter((object) => object.kind === 'ScaledObject') as unknown as ScaledObject[];
    expect(scaled.map((object) => object.spec.scaleTargetRef.name).sort()).toEqual(['webhook-dispatcher', 'workflow-runner']);
    const backlog = { 'workflow-runner': 'workflow_executions_backlog', 'webhook-dispatcher': 'webhook_deliveries_backlog' };
    for (const object of scaled) {
      const target = object.spec.scaleTargetRef.name as keyof typeof backlog;
      expect(objects.some((candidate) => candidate.kind === 'Deployment' && candidate.metadata.name === target)).toBe(true);
      const prometheus = object.spec.triggers.find((trigger) => trigger.type === 'prometheus');
      expect(prometheus?.metadata.query, target).toContain(backlog[target]);
      expect(object.spec.minReplicaCount).toBeGreaterThanOrEqual(2);
    }
    const hpaTargets = objects.filter((object) => object.kind === 'HorizontalPodAutoscaler').map((object) => (object.spec as unknown as { scaleTargetRef: { name: string } }).scaleTargetRef.name);
    expect(hpaTargets).not.toContain('workflow-runner');
    expect(hpaTargets).not.toContain('webhook-dispatcher');
  });
});

interface ScaledObject {
  spec: { scaleTargetRef: { name: string }; minReplicaCount?: number; triggers: { type: string; metadata: Record<string, string> }[] };
}
