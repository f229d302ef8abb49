/**
 * The image's last build step, run by deploy/docker/prune.sh inside the pruned output: writes the
 * word vectors' cache where the loader looks (node_modules/.cache beside dist/), which the image's
 * read-only root file system keeps the service from writing, then drops the package's 300 MB JSON
 * it was made from and loads the vectors back from the cache alone, so a broken image fails here.
 */
import { realpath, rm } from 'node:fs/promises';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundledWordVectors } from './models/word-vector-file.js';
import { defaultWordVectorCache, loadWordVectors, WORD_VECTOR_ROWS, writeWordVectorCache } from './models/word-vectors.js';

const source = { ...bundledWordVectors(), rows: WORD_VECTOR_ROWS };
const cacheDirectory = defaultWordVectorCache();
const packageDirectory = await realpath(fileURLToPath(new URL('..', import.meta.url)));
const file = await realpath(source.file);
// In the workspace the file is a link into pnpm's store, outside the package: dropping it would break the install.
if (!file.startsWith(packageDirectory + sep)) throw new Error(`finish-image: ${file} is not inside ${packageDirectory}; run this in an output of deploy/docker/prune.sh only`);

const cacheFile = await writeWordVectorCache({ ...source, cacheDirectory });
await rm(file);
const { vectors } = await loadWordVectors({ ...source, cacheDirectory });
console.log(`finish-image: ${vectors.size} word vectors cached in ${cacheFile}; ${file} dropped`);
