import { writeFile } from 'node:fs/promises';
import { buildDashboards } from './dashboards.js';

// `pnpm dashboards`: writes each dashboard's JSON beside this file, for Grafana's provisioning.
for (const [file, dashboard] of Object.entries(buildDashboards())) {
  await writeFile(new URL(file, import.meta.url), `${JSON.stringify(dashboard, null, 2)}\n`);
  process.stdout.write(`dashboards: wrote ${file}\n`);
}
