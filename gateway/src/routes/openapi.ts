import type { FastifyPluginCallback } from 'fastify';

/** The OpenAPI 3.1 document (also behind the Swagger UI at /docs). */
const openapiRoute: FastifyPluginCallback = (app, _options, done) => {
  app.get('/openapi.json', { schema: { hide: true } }, (_request, reply) => reply.type('application/json').send(app.swagger()));
  done();
};

export default openapiRoute;
