/**
 * The V8 flags a part of the platform runs with, the same however it starts: the image's
 * ENTRYPOINT (which Tilt's live copy runs, tilt.test.ts), `pnpm start`'s launcher and the mesh's
 * replicas: the young generation's size and the old one's growth (docs/architecture.md, "Two ways
 * to run").
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REPLICA_NODE_ARGUMENTS } from '../../deploy/local/src/mesh/replica.js';
import { REPO_ROOT } from '../e2e/harness/processes.js';

const V8_FLAGS = ['--max-semi-space-size=64', '--heap-growing-percent=100'];

it('gives Node the same V8 flags in the image, the launcher and the mesh', () => {
  const dockerfile = readFileSync(join(REPO_ROOT, 'deploy/docker/Dockerfile'), 'utf8');
  const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
  const launcher = (JSON.parse(readFileSync(join(REPO_ROOT, 'deploy/local/package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(' ');
  for (const [where, args] of Object.entries({ 'the image': entrypoint, 'pnpm start': launcher, 'the mesh': REPLICA_NODE_ARGUMENTS })) {
    expect(args.filter((arg) => V8_FLAGS.some((flag) => arg.startsWith(flag.split('=')[0]!))), where).toEqual(V8_FLAGS);
  }
});
