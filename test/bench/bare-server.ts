/**
 * A bare Fastify route in a process of its own: the ceiling a gateway route is compared with.
 * Prints `listening <port>` once it answers; stops on SIGINT/SIGTERM.
 */
import Fastify from 'fastify';

const app = Fastify();
app.get('/', () => ({ ok: true }));
app.post('/', () => ({ ok: true }));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
console.log(`listening ${typeof address === 'object' && address ? address.port : 0}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void app.close().then(() => process.exit(0)));
