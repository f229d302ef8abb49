// Builds the console into dist/ and measures what a first visit downloads.
//   node --import tsx scripts/build.ts             always builds
//   node --import tsx scripts/build.ts --if-stale  builds only when a source changed since the last build
// `pnpm start` runs the second, so the console a developer sees is never older than its sources.
import { createHash } from 'node:crypto';
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { build } from 'vite';

const CONSOLE_DIR = fileURLToPath(new URL('../', import.meta.url));
const DIST_DIR = join(CONSOLE_DIR, 'dist');
/** decisions §15 / issue budget: JavaScript of the first load, gzipped. */
export const FIRST_LOAD_BUDGET_BYTES = 250 * 1024;
const REPORT_NAME = 'build-report.json';

/** What the bundle is made of: its own sources and the typed client's, bundled from source. */
const INPUTS = ['index.html', 'vite.config.ts', 'package.json', 'src', '../packages/client/src', '../pnpm-lock.yaml'];

export interface BuildReport {
  inputsHash: string;
  /** The entry chunk and every chunk it imports statically: what the first visit must download. */
  firstLoad: { files: string[]; bytes: number; gzipBytes: number };
  /** Every JavaScript chunk, lazily loaded ones included. */
  totalJs: { bytes: number; gzipBytes: number };
}

interface ManifestChunk {
  file: string;
  isEntry?: boolean;
  imports?: string[];
}

async function inputsHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const input of INPUTS) {
    for (const file of await filesUnder(join(CONSOLE_DIR, input))) {
      hash.update(relative(CONSOLE_DIR, file)).update('\0').update(await readFile(file)).update('\0');
    }
  }
  return hash.digest('hex');
}

async function filesUnder(path: string): Promise<string[]> {
  const entries = await readdir(path, { withFileTypes: true, recursive: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOTDIR') return undefined;
    throw error;
  });
  if (entries === undefined) return [path];
  return entries
    .filter((entry) => entry.isFile() && !entry.name.endsWith('.test.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

async function previousReport(): Promise<BuildReport | undefined> {
  try {
    return JSON.parse(await readFile(join(DIST_DIR, REPORT_NAME), 'utf8')) as BuildReport;
  } catch {
    return undefined;
  }
}

async function measure(hash: string, outDir: string): Promise<BuildReport> {
  const manifest = JSON.parse(await readFile(join(outDir, '.vite/manifest.json'), 'utf8')) as Record<string, ManifestChunk>;
  const entry = Object.entries(manifest).find(([, chunk]) => chunk.isEntry);
  if (!entry) throw new Error('console build: the manifest names no entry chunk');
  const firstLoad = new Set<string>();
  const visit = (key: string) => {
    const chunk = manifest[key];
    if (!chunk || firstLoad.has(chunk.file)) return;
    firstLoad.add(chunk.file);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  visit(entry[0]);
  const sizes = new Map<string, { bytes: number; gzipBytes: number }>();
  for (const file of await filesUnder(join(outDir, 'assets'))) {
    if (!file.endsWith('.js')) continue;
    const content = await readFile(file);
    sizes.set(relative(outDir, file), { bytes: content.length, gzipBytes: (await promisify(gzip)(content, { level: 9 })).length });
  }
  const sum = (files: Iterable<string>) => {
    let bytes = 0;
    let gzipBytes = 0;
    for (const file of files) {
      bytes += sizes.get(file)?.bytes ?? 0;
      gzipBytes += sizes.get(file)?.gzipBytes ?? 0;
    }
    return { bytes, gzipBytes };
  };
  return { inputsHash: hash, firstLoad: { files: [...firstLoad], ...sum(firstLoad) }, totalJs: sum(sizes.keys()) };
}

const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;

const hash = await inputsHash();
if (process.argv.includes('--if-stale') && (await previousReport())?.inputsHash === hash) process.exit(0);

// A production build whoever runs it: NODE_ENV from a test runner would otherwise give development React.
process.env.NODE_ENV = 'production';
// Built beside dist/ and swapped in whole, report included: a gateway serving dist/ (or another
// build running at the same time) never sees it half written or emptied.
const outDir = join(CONSOLE_DIR, `dist-${process.pid}`);
await build({ root: CONSOLE_DIR, configFile: join(CONSOLE_DIR, 'vite.config.ts'), mode: 'production', logLevel: 'warn', build: { outDir } });
const report = await measure(hash, outDir);
await writeFile(join(outDir, REPORT_NAME), `${JSON.stringify(report, null, 2)}\n`);
const replaced = join(CONSOLE_DIR, `dist-old-${process.pid}`);
await rename(DIST_DIR, replaced).catch((error: NodeJS.ErrnoException) => {
  if (error.code !== 'ENOENT') throw error;
});
await rename(outDir, DIST_DIR);
await rm(replaced, { recursive: true, force: true });
process.stdout.write(
  `console: first load ${kB(report.firstLoad.gzipBytes)} of JavaScript gzipped (budget ${kB(FIRST_LOAD_BUDGET_BYTES)}; ${kB(report.firstLoad.bytes)} raw), ` +
    `all chunks ${kB(report.totalJs.gzipBytes)} gzipped\n`,
);
if (report.firstLoad.gzipBytes > FIRST_LOAD_BUDGET_BYTES) {
  process.stderr.write(`console: the first load is over its budget of ${kB(FIRST_LOAD_BUDGET_BYTES)} gzipped\n`);
  process.exit(1);
}
