/**
 * The one-process peer a team would write instead of the mesh, in a process of its own: one Fastify
 * app that verifies an EdDSA access token with jose (verified tokens cached until they expire) and
 * reads the user with every membership from PostgreSQL in one prepared query, answering what
 * GET /api/v1/auth/me answers. Its tables have the platform's shape (users, tenants, memberships)
 * in a database of its own on the PostgreSQL server it is given.
 * Run: node --import tsx test/bench/peer-server.ts <postgres url of a maintenance database>
 * Prints `listening <port> <access token>` once it answers; stops on SIGINT/SIGTERM.
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { generateKeyPair, jwtVerify, SignJWT } from 'jose';
import pg from 'pg';

const DATABASE = 'bench_peer';
const USERS = 1_000;
const ISSUER = 'bench-peer';
const AUDIENCE = 'bench-peer-api';

const serverUrl = process.argv[2];
if (!serverUrl) throw new Error('usage: peer-server.ts <postgres url>');
const databaseUrl = new URL(serverUrl);
databaseUrl.pathname = `/${DATABASE}`;

await createDatabase(serverUrl);
const pool = new pg.Pool({ connectionString: databaseUrl.toString(), max: 10 });
const userId = await seed(pool);

const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
const accessToken = await new SignJWT({})
  .setProtectedHeader({ alg: 'EdDSA', kid: 'peer' })
  .setSubject(userId)
  .setIssuer(ISSUER)
  .setAudience(AUDIENCE)
  .setIssuedAt()
  .setExpirationTime('2h')
  .sign(privateKey);

const verified = new Map<string, { sub: string; expiresAtMs: number }>();
async function userOf(authorization: string | undefined): Promise<string | undefined> {
  const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
  if (!token) return undefined;
  const known = verified.get(token);
  if (known && known.expiresAtMs > Date.now()) return known.sub;
  try {
    const { payload } = await jwtVerify(token, publicKey, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['EdDSA'], requiredClaims: ['sub', 'exp'] });
    if (typeof payload.sub !== 'string') return undefined;
    verified.set(token, { sub: payload.sub, expiresAtMs: (payload.exp ?? 0) * 1000 });
    return payload.sub;
  } catch {
    return undefined;
  }
}

const profileQuery = {
  name: 'user_profile',
  text: `select u.id, u.email, u.full_name, u.is_active, u.created_at,
                coalesce(json_agg(json_build_object('id', t.id, 'name', t.name, 'role', m.role)
                                  order by m.created_at, m.tenant_id) filter (where m.tenant_id is not null), '[]') as tenants
           from users u
           left join memberships m on m.user_id = u.id
           left join tenants t on t.id = m.tenant_id
          where u.id = $1
          group by u.id`,
};

const error = { type: 'object', properties: { error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } } } } } as const;
const app = Fastify();
app.get(
  '/api/v1/auth/me',
  {
    schema: {
      response: {
        200: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            email: { type: 'string' },
            full_name: { type: 'string' },
            is_active: { type: 'boolean' },
            created_at: { type: 'string' },
            tenants: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' } } } },
          },
        },
        401: error,
      },
    },
  },
  async (request, reply) => {
    const user = await userOf(request.headers.authorization);
    const row = user === undefined ? undefined : (await pool.query<ProfileRow>({ ...profileQuery, values: [user] })).rows[0];
    if (!row?.is_active) return reply.code(401).send({ error: { code: 'unauthorized', message: 'The access token is invalid.' } });
    return { ...row, created_at: row.created_at.toISOString() };
  },
);
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
console.log(`listening ${typeof address === 'object' && address ? address.port : 0} ${accessToken}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => void Promise.all([app.close(), pool.end()]).then(() => process.exit(0)));
}

interface ProfileRow {
  id: string;
  email: string;
  full_name: string;
  is_active: boolean;
  created_at: Date;
  tenants: { id: string; name: string; role: string }[];
}

async function createDatabase(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [DATABASE]);
    if (rowCount === 0) await admin.query(`create database ${DATABASE}`);
  } finally {
    await admin.end();
  }
}

/** The platform's shape: every user owns a tenant and is a member of a second one. Answers one user's id. */
async function seed(db: pg.Pool): Promise<string> {
  await db.query(`
    drop table if exists memberships, tenants, users;
    create table users (id text primary key, email text not null unique, password_hash text not null, full_name text not null,
                        is_active boolean not null default true, created_at timestamptz not null default now());
    create table tenants (id text primary key, name text not null, plan text not null default 'free', created_at timestamptz not null default now());
    create table memberships (tenant_id text not null references tenants, user_id text not null references users, role text not null,
                              created_at timestamptz not null default now(), primary key (tenant_id, user_id));
    create index memberships_user_id_index on memberships (user_id);`);
  const ids = Array.from({ length: USERS }, () => randomUUID());
  await db.query(
    `insert into users (id, email, password_hash, full_name) select id, id || '@example.com', 'unused', 'Peer user' from unnest($1::text[]) as id`,
    [ids],
  );
  await db.query(`insert into tenants (id, name) select id, 'Tenant of ' || id from unnest($1::text[]) as id`, [ids]);
  await db.query(
    `insert into memberships (tenant_id, user_id, role)
       select id, id, 'owner' from unnest($1::text[]) as id
       union all
       select ids[(i % array_length(ids, 1)) + 1], ids[i], 'member' from (select $1::text[] as ids) s, generate_series(1, array_length($1::text[], 1)) as i`,
    [ids],
  );
  await db.query('analyze');
  return ids[0]!;
}
