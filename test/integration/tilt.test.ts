/**
 * The Tiltfile without Tilt: it builds every image the dev overlay runs, with the Dockerfile, syncs
 * what the image holds into room the dev overlay makes, and groups and forwards the workloads that
 * overlay has; its processes mode still runs every part.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../e2e/harness/processes.js';
import { environmentOf, isDeployment, PLATFORM, podOf, render, secretData } from './support/manifests.js';
import { IMAGE_BUILDERS, imageBuild, text, tiltCalls, type TiltCall } from './support/tiltfile.js';

const TILTFILE = readFileSync(join(REPO_ROOT, 'Tiltfile'), 'utf8');
const DOCKERFILE = readFileSync(join(REPO_ROOT, 'deploy/docker/Dockerfile'), 'utf8');
const HAS_PYTHON = spawnSync('python3', ['--version']).status === 0;

interface PackageManifest {
  name: string;
  files?: string[];
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
}

/** A JSON file, or a tsconfig with comments (TypeScript's own reader). */
function readJson<T>(path: string): T {
  return ts.parseConfigFileTextToJson(path, readFileSync(join(REPO_ROOT, path), 'utf8')).config as T;
}

/** The calls `tilt up` makes: its default mode is the cluster. */
function clusterCalls(...callees: string[]): TiltCall[] {
  return tiltCalls(TILTFILE, 'cluster', callees);
}

/** An image named without a tag or digest is one of ours; pulled ones are pinned. */
const untagged = (image: string) => !/[:@]/.test(image.split('/').at(-1)!);

/** Package directories `tsc -b tsconfig.build.json` (`pnpm build`, the Tiltfile's compile resource) compiles. */
function compiledPackages(config = 'tsconfig.build.json', seen = new Set<string>()): Set<string> {
  for (const { path } of readJson<{ references?: { path: string }[] }>(config).references ?? []) {
    const referenced = join(dirname(config), path);
    if (!seen.has(dirname(referenced))) compiledPackages(referenced, seen.add(dirname(referenced)));
  }
  return seen;
}

/** Where a build's entrypoint runs the service from: a copy of the image's WORKDIR, running its ENTRYPOINT. */
function liveAppDir(entrypoint: string): string {
  const workdir = [...DOCKERFILE.matchAll(/^WORKDIR (\S+)$/gm)].at(-1)?.[1];
  const command = (JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(DOCKERFILE)![1]!) as string[]).join(' ');
  expect(entrypoint).toContain(`cp -a ${workdir} `);
  const app = new RegExp(`cd (\\S+) && exec ${command.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`).exec(entrypoint)?.[1];
  expect(app, `the entrypoint runs the image's ENTRYPOINT (${command}) from the copy`).toBeDefined();
  expect(`${app}/`.startsWith(`${workdir}/`)).toBe(false);
  return app!;
}

/**
 * Peers a service calls only when a request needs them, never to start: agent-memory asks
 * workflow-runner about a workflow tool's workflow, and workflow-runner (which calls agent-memory
 * for agent nodes) starts after it, so the two never wait for each other.
 */
const LAZY_PEERS: Record<string, readonly string[]> = { 'agent-memory': ['workflow-runner'] };

/** Every host a loaded configuration points at (URLs, and gRPC targets `[dns:///]host:port`). */
function hostsOf(value: unknown): string[] {
  if (typeof value === 'string') {
    const target = /^(?:dns:\/\/\/)?([a-z0-9.-]+):\d{1,5}$/i.exec(value);
    if (target) return [target[1]!];
    return URL.canParse(value) && value.includes('://') ? [new URL(value).hostname] : [];
  }
  if (value instanceof Map) return [...value.values()].flatMap(hostsOf);
  if (value && typeof value === 'object' && !Buffer.isBuffer(value)) return Object.values(value).flatMap(hostsOf);
  return [];
}

describe('the Tiltfile', () => {
  it.skipIf(!HAS_PYTHON)('parses as Python, whose syntax Starlark shares', () => {
    const result = spawnSync('python3', ['-c', 'import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])', join(REPO_ROOT, 'Tiltfile')], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('keeps the processes mode: every part as a local process from its TypeScript, with telemetry and metrics of its own', () => {
    expect(TILTFILE).toMatch(/^mode = cfg\.get\('mode', 'cluster'\)$/m);
    const processes = tiltCalls(TILTFILE, 'processes', ['local_resource']);
    const metricsPorts = new Set<string>();
    for (const [name, { packageDir }] of Object.entries(PLATFORM)) {
      const call = processes.find((candidate) => candidate.args[0] === name);
      expect(call?.kwargs.serve_cmd, name).toBe(`node --import tsx --import ./packages/kit/src/telemetry/register.ts ${packageDir}/src/main.ts`);
      const env = call?.kwargs.serve_env as Record<string, unknown> | undefined;
      metricsPorts.add(String(env?.METRICS_PORT));
    }
    // One machine: the default 9464 for all would leave four of them unable to start.
    expect(metricsPorts.size).toBe(Object.keys(PLATFORM).length);
  });

  it('builds every image of ours the dev overlay runs, and no other, with the Dockerfile and a SERVICE that starts', async () => {
    const images = (await render('overlays/dev')).filter(isDeployment).flatMap((deployment) => [...(podOf(deployment).initContainers ?? []), ...podOf(deployment).containers].map((container) => container.image));
    const builds = clusterCalls(...IMAGE_BUILDERS).map(imageBuild);
    expect(builds.map((build) => build.ref).sort()).toEqual([...new Set(images.filter(untagged))].sort());
    expect(builds.length).toBe(Object.keys(PLATFORM).length);
    expect(DOCKERFILE).toMatch(/^ARG SERVICE$/m);
    for (const build of builds) {
      expect(build, build.ref).toMatchObject({ dockerfile: 'deploy/docker/Dockerfile', context: '.', service: expect.any(String) });
      const service = build.service!;
      expect(readJson<PackageManifest>(`${service}/package.json`).scripts?.start, `${service}'s start script`).toEqual(expect.any(String));
      expect(build.ref.split('/').at(-1)).toBe(service.split('/').at(-1));
    }
  });

  it('syncs the compiled dist/ of the service and of each workspace package it uses to where the image keeps them', () => {
    const compiled = compiledPackages();
    expect(readJson<{ compilerOptions: { outDir: string } }>('tsconfig.build.base.json').compilerOptions.outDir).toBe('${configDir}/dist');
    for (const build of clusterCalls(...IMAGE_BUILDERS).map(imageBuild)) {
      const service = build.service!;
      const app = liveAppDir(build.entrypoint);
      const own = readJson<PackageManifest>(`${service}/package.json`);
      const syncedPackages: string[] = [];
      expect(build.syncs.map((sync) => sync.from)).toContain(`${service}/dist`);
      for (const { from, to } of build.syncs) {
        const dir = /^(.+)\/dist$/.exec(from)?.[1];
        expect(dir, `${build.ref} syncs ${from}, a package's dist/`).toBeDefined();
        expect(existsSync(join(REPO_ROOT, dir!, 'package.json')), `${dir} is a package`).toBe(true);
        if (dir === 'console') {
          // The console is Vite's to build: a resource of its own rebuilds it into dist/ as it changes.
          const consoleBuild = clusterCalls('local_resource').find((call) => call.args[0] === 'console');
          expect(consoleBuild?.kwargs.serve_cmd).toBe('pnpm --dir console exec vite build --watch --mode production');
        } else {
          // Written by the compile resource (and `pnpm build`) with the build base's outDir…
          expect(compiled, `tsc -b tsconfig.build.json compiles ${dir}`).toContain(dir);
          expect(readJson<{ extends: string }>(`${dir}/tsconfig.build.json`).extends).toMatch(/(^|\/)tsconfig\.build\.base\.json$/);
        }
        // …watched by Tilt for this image, and shipped by `pnpm deploy` where it is synced to.
        expect(build.watched, `Tilt watches ${from}`).toContain(from);
        const manifest = readJson<PackageManifest>(`${dir}/package.json`);
        expect(manifest.files, `${dir} ships dist/`).toContain('dist');
        if (dir === service) expect(to).toBe(`${app}/dist`);
        else {
          expect(own.dependencies, `${service} depends on ${manifest.name}`).toHaveProperty([manifest.name]);
          expect(to).toBe(`${app}/node_modules/${manifest.name}/dist`);
          syncedPackages.push(manifest.name);
        }
      }
      const workspaceDependencies = Object.entries(own.dependencies ?? {}).filter(([, version]) => version.startsWith('workspace:'));
      expect(syncedPackages.sort()).toEqual(workspaceDependencies.map(([name]) => name).sort());
    }
  });

  it('runs each image from a writable volume of the dev overlay, restarted through a file made before it starts', async () => {
    const deployments = (await render('overlays/dev')).filter(isDeployment);
    const builds = clusterCalls(...IMAGE_BUILDERS).map(imageBuild);
    for (const build of builds) {
      const pod = podOf(deployments.find((deployment) => podOf(deployment).containers.some((container) => container.image === build.ref))!);
      const container = pod.containers.find((candidate) => candidate.image === build.ref)!;
      const emptyDirHolding = (path: string) =>
        container.volumeMounts?.find((mount) => path.startsWith(`${mount.mountPath}/`) && pod.volumes?.some((volume) => volume.name === mount.name && volume.emptyDir));
      expect(emptyDirHolding(liveAppDir(build.entrypoint)), `${build.ref}: the copy is writable`).toBeDefined();
      const restartFile = build.restartFile;
      const mount = emptyDirHolding(restartFile);
      expect(mount, `${build.ref}: ${restartFile} is writable`).toBeDefined();
      // The restart extension's watcher exits if the file is missing: an init container makes it on
      // the same volume, from an image Tilt does not build (Tilt would replace its command).
      const init = pod.initContainers?.find((candidate) => candidate.command?.includes(restartFile));
      expect(init?.volumeMounts, `${build.ref}: an init container creates ${restartFile}`).toContainEqual(mount);
      expect(builds.map((other) => other.ref)).not.toContain(init!.image.split(':')[0]);
    }
  });

  it('applies the dev overlay and groups every workload as infra, services or gateway, after what it connects to', async () => {
    const objects = await render('overlays/dev');
    expect(clusterCalls('k8s_yaml')).toEqual([{ fn: 'k8s_yaml', args: [{ fn: 'kustomize', args: ['deploy/k8s/overlays/dev'], kwargs: {} }], kwargs: {} }]);
    const deployments = objects.filter(isDeployment);
    const resources = new Map(clusterCalls('k8s_resource').map((call) => [text(call.args[0] ?? call.kwargs.workload ?? null), call]));
    expect([...resources.keys()].sort()).toEqual(deployments.map((deployment) => deployment.metadata.name).sort());
    const known = new Set([...resources.keys(), ...clusterCalls('local_resource').map((call) => text(call.args[0] ?? null))]);
    const group = (name: string) => (name === 'gateway' ? 'gateway' : name in PLATFORM ? 'services' : 'infra');
    const depsOf = (name: string) => (resources.get(name)?.kwargs.resource_deps ?? []) as string[];
    const startsAfter = (name: string, seen = new Set<string>()): Set<string> => {
      for (const dep of depsOf(name)) if (!seen.has(dep)) startsAfter(dep, seen.add(dep));
      return seen;
    };
    const secrets = secretData(objects, 'agent-platform-secrets', {});
    for (const [name, call] of resources) {
      expect(call.kwargs.labels, name).toEqual([group(name)]);
      for (const dep of depsOf(name)) expect(known, `${name} waits for ${dep}`).toContain(dep);
      expect(startsAfter(name), `${name} in a dependency cycle`).not.toContain(name);
      if (group(name) === 'infra') {
        expect(depsOf(name).map(group), `infra ${name} waits for infra only`).not.toContain('services');
        continue;
      }
      const env = environmentOf(podOf(deployments.find((deployment) => deployment.metadata.name === name)!).containers[0]!, objects, secrets);
      for (const host of new Set(hostsOf(PLATFORM[name]!.load(env)))) {
        if (LAZY_PEERS[name]?.includes(host)) continue;
        if (resources.has(host)) expect(startsAfter(name), `${name} connects to ${host}`).toContain(host);
      }
    }
  });

  it('forwards the gateway (8080) and Jaeger (16686) to ports their containers listen on and their Services target', async () => {
    const objects = await render('overlays/dev');
    const forwards = clusterCalls('k8s_resource').flatMap((call) => {
      const value = call.kwargs.port_forwards;
      return (value === undefined ? [] : Array.isArray(value) ? value : [value]).map((entry) => {
        // '8080', '8080:8080', 'host:8080:8080' or port_forward(8080, 8080)
        const helper = typeof entry === 'object' && entry !== null && 'fn' in entry && entry.fn === 'port_forward' ? (entry as TiltCall) : undefined;
        const parts = helper ? [helper.args[0] ?? helper.kwargs.local_port ?? null, helper.args[1] ?? helper.kwargs.container_port ?? null].filter((part) => part !== null).map(text) : text(entry).split(':').slice(-2);
        const [local, container = local] = parts.map(Number);
        return { workload: text(call.args[0] ?? null), local, container };
      });
    });
    expect(forwards).toEqual(expect.arrayContaining([{ workload: 'gateway', local: 8080, container: 8080 }, { workload: 'jaeger', local: 16686, container: 16686 }]));
    for (const { workload, container } of forwards) {
      const deployment = objects.find((object) => isDeployment(object) && object.metadata.name === workload)!;
      const port = podOf(deployment).containers.flatMap((candidate) => candidate.ports ?? []).find((candidate) => candidate.containerPort === container);
      expect(port, `${workload} listens on ${container}`).toBeDefined();
      const labels = deployment.spec!.template!.metadata.labels;
      const services = objects.filter((object) => object.kind === 'Service' && Object.entries(object.spec?.selector ?? {}).every(([key, value]) => labels[key] === value));
      const targets = services.flatMap((service) => service.spec?.ports ?? []).map((servicePort) => servicePort.targetPort);
      expect(targets.some((target) => target === port!.name || target === port!.containerPort), `a Service targets ${workload}:${container}`).toBe(true);
    }
  });
});
