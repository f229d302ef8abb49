import { existsSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';

/**
 * A secret the local mode makes on first start and keeps beside its data (mode 0600), so a restart
 * finds the same one: the embedded database's password, the webhook-secret encryption key.
 */
export async function readOrCreateSecret(file: string, make: () => string): Promise<string> {
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const secret = make();
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return secret;
}
