import { GRANTABLE_ROLES } from '@agent-platform/kit';
import type { Member } from '@agent-platform/proto/identity/v1/users';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callAs } from '../../../../../../http/calls.js';
import { errorResponses } from '../../../../../../http/error-responses.js';
import { iso, pageOf, pathId, Paging, SuccessSchema, Timestamp } from '../../../../../../http/schemas.js';

/** `owner` is not granted here: a tenant's owner is who created it. */
const GrantableRole = z.enum(GRANTABLE_ROLES);

const MemberSchema = z.object({
  user_id: z.string(),
  email: z.string(),
  full_name: z.string(),
  role: z.string().describe('owner | admin | member | viewer'),
  created_at: Timestamp,
});

const TenantParams = z.object({ tenant_id: pathId('tenant', 'tnt') });
const MemberParams = TenantParams.extend({ user_id: pathId('member (a user)', 'usr') });
const AddMemberBody = z.object({ email: z.email().max(254), role: GrantableRole }).meta({ examples: [{ email: 'grace@example.com', role: 'member' }] });
const UpdateMemberBody = z.object({ role: GrantableRole }).meta({ examples: [{ role: 'admin' }] });

function member(answer: Member | undefined): z.output<typeof MemberSchema> {
  if (!answer) throw new Error('Identity answered without the member.');
  return { user_id: answer.userId, email: answer.email, full_name: answer.fullName, role: answer.role, created_at: iso(answer.createdAt) };
}

/**
 * /tenants/{tenant_id}/members: admins and owners, access tokens only. The path names the tenant
 * (checked for membership like `tenant_id` elsewhere). A change drops the member's cached
 * membership so it takes effect at once.
 */
const memberRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.get(
    '',
    {
      schema: {
        operationId: 'listTenantMembers',
        tags: ['members'],
        summary: 'List the members of the tenant',
        params: TenantParams,
        querystring: Paging,
        response: { 200: pageOf(MemberSchema) },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      // Member lists are short; identity returns them whole and the gateway pages them.
      const { items } = await app.identity.members.listMembers({}, callAs(request));
      const start = (page - 1) * per_page;
      return { items: items.slice(start, start + per_page).map(member), total: items.length, page, per_page };
    },
  );

  app.post(
    '',
    {
      schema: {
        operationId: 'addTenantMember',
        tags: ['members'],
        summary: 'Add a registered user to the tenant by e-mail',
        params: TenantParams,
        body: AddMemberBody,
        response: {
          201: MemberSchema,
          ...errorResponses({
            not_found: 'No registered user has this e-mail address.',
            conflict: 'The user is a member of the tenant already.',
          }),
        },
      },
    },
    async (request, reply) => {
      const answer = await app.identity.members.addMember({ email: request.body.email.toLowerCase(), role: request.body.role }, callAs(request));
      const added = member(answer.member);
      await app.principals.forgetMembership(added.user_id, request.params.tenant_id);
      return reply.code(201).send(added);
    },
  );

  app.patch(
    '/:user_id',
    {
      schema: {
        operationId: 'updateTenantMember',
        tags: ['members'],
        summary: "Change a member's role",
        params: MemberParams,
        body: UpdateMemberBody,
        response: { 200: MemberSchema, ...errorResponses({ forbidden: "The caller lacks the admin role, or the member is the tenant's owner." }) },
      },
    },
    async (request) => {
      const { tenant_id, user_id } = request.params;
      const answer = await app.identity.members.updateMember({ userId: user_id, role: request.body.role }, callAs(request));
      await app.principals.forgetMembership(user_id, tenant_id);
      return member(answer.member);
    },
  );

  app.delete(
    '/:user_id',
    {
      schema: {
        operationId: 'removeTenantMember',
        tags: ['members'],
        summary: 'Remove a member from the tenant',
        params: MemberParams,
        response: { 200: SuccessSchema, ...errorResponses({ forbidden: "The caller lacks the admin role, or the member is the tenant's owner." }) },
      },
    },
    async (request) => {
      const { tenant_id, user_id } = request.params;
      await app.identity.members.removeMember({ userId: user_id }, callAs(request));
      await app.principals.forgetMembership(user_id, tenant_id);
      return { success: true as const, message: 'Member removed.' };
    },
  );
  done();
};

export default memberRoutes;
