import type { RequestBody, ResponseBody } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useSession, useTenantQuery } from '../../api/session-context.js';
import { Empty, ErrorNotice, QueryState } from '../../ui/feedback.js';
import { Field, formValues } from '../../ui/form.js';
import { Page, Pager, Time } from '../../ui/page.js';
import { ConfirmButton } from './confirm-button.js';
import './settings.css';
import { ScrollTable } from './scroll-table.js';

const PER_PAGE = 20;
const route = getRouteApi('/app/settings/members');

type Member = ResponseBody<'/api/v1/tenants/{tenant_id}/members', 'get'>['items'][number];
type GrantableRole = RequestBody<'/api/v1/tenants/{tenant_id}/members', 'post'>['role'];

/** decisions §3: what each role a member can be given may do (owner is only ever the tenant's creator). */
const ROLES: Record<GrantableRole, string> = {
  admin: 'Admin: everything but billing, including webhooks, API keys and members',
  member: 'Member: reads, writes agents, memory and workflows, runs workflows',
  viewer: 'Viewer: reads only',
};
const ROLE_NAMES = Object.keys(ROLES) as GrantableRole[];
const isGrantableRole = (role: string): role is GrantableRole => role in ROLES;

export function MembersPage() {
  const { page = 1 } = route.useSearch();
  const navigate = useNavigate();
  const { state } = useSession();
  const tenantId = state.tenantId;
  const tenant = state.user?.tenants.find((membership) => membership.id === tenantId);
  const [adding, setAdding] = useState(false);
  const [added, setAdded] = useState<Member>();
  const members = useTenantQuery(
    ['members', page],
    (client) => call(client.GET('/api/v1/tenants/{tenant_id}/members', { params: { path: { tenant_id: tenantId ?? '' }, query: { page, per_page: PER_PAGE } } })),
    { enabled: tenantId !== undefined },
  );
  if (!tenantId || !tenant) {
    return (
      <Page title="Members">
        <Empty title="You belong to no tenant">
          <p>Ask an admin of a tenant to add you by your e-mail address.</p>
        </Empty>
      </Page>
    );
  }
  return (
    <Page
      title="Members"
      actions={
        <button
          type="button"
          disabled={adding}
          onClick={() => {
            setAdded(undefined);
            setAdding(true);
          }}
        >
          Add member
        </button>
      }
    >
      <p className="muted">
        Who may act in <strong>{tenant.name}</strong>, and as what. Your role here: <strong>{tenant.role}</strong>. Admins and the owner manage members.
      </p>
      {added ? (
        <p className="notice notice-info" role="status">
          {added.email} was added as {added.role}.
        </p>
      ) : null}
      {adding ? (
        <AddMember
          tenantId={tenantId}
          onAdded={(member) => {
            setAdding(false);
            setAdded(member);
          }}
          onCancel={() => setAdding(false)}
        />
      ) : null}
      <QueryState query={members} loadingLabel="Loading members…">
        {(list) =>
          list.items.length === 0 ? (
            <Empty title="No members on this page" />
          ) : (
            <>
              <ScrollTable label="Member list">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">E-mail</th>
                      <th scope="col">Role</th>
                      <th scope="col">Joined</th>
                      <th scope="col">
                        <span className="visually-hidden">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.items.map((member) => (
                      <MemberRow key={member.user_id} tenantId={tenantId} member={member} />
                    ))}
                  </tbody>
                </table>
              </ScrollTable>
              <Pager page={page} perPage={PER_PAGE} total={list.total} onPage={(next) => void navigate({ to: '/settings/members', search: { page: next } })} />
            </>
          )
        }
      </QueryState>
    </Page>
  );
}

function MemberRow({ tenantId, member }: { tenantId: string; member: Member }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const { session, state } = useSession();
  const [role, setRole] = useState(member.role);
  const isMe = member.user_id === state.user?.id;
  const path = { params: { path: { tenant_id: tenantId, user_id: member.user_id } } };
  // A change to one's own membership changes what the session may do: the user is read again
  // first (leaving a tenant moves the session to another, whose members are then shown).
  const afterChange = async (left: boolean) => {
    if (isMe) {
      // Every call carries the session's tenant, /auth/me included, and the one just left would
      // answer 403 (which ends the session): move to another tenant before reading the user.
      const elsewhere = state.user?.tenants.find((membership) => membership.id !== tenantId);
      if (left && elsewhere) session.switchTenant(elsewhere.id);
      await session.loadUser();
    }
    await invalidate('members');
  };
  const changeRole = useMutation({
    mutationFn: (next: GrantableRole) => call(client.PATCH('/api/v1/tenants/{tenant_id}/members/{user_id}', { ...path, body: { role: next } })),
    onSuccess: () => afterChange(false),
  });
  const remove = useMutation({
    mutationFn: () => call(client.DELETE('/api/v1/tenants/{tenant_id}/members/{user_id}', path)),
    onSuccess: () => afterChange(true),
  });
  const submitRole = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (isGrantableRole(role)) changeRole.mutate(role);
  };
  const label = member.full_name || member.email;
  const error = changeRole.error ?? remove.error;
  return (
    <>
      <tr>
        <td>
          {member.full_name || <span className="muted">—</span>}
          {isMe ? <span className="muted"> (you)</span> : null}
        </td>
        <td>{member.email}</td>
        <td>
          {member.role === 'owner' ? (
            <span className="badge">owner</span>
          ) : (
            <form className="row-actions" onSubmit={submitRole}>
              <select aria-label={`Role of ${member.email}`} value={role} onChange={(event) => setRole(event.target.value)}>
                {ROLE_NAMES.map((name) => (
                  <option key={name} value={name}>
                    {name}
                  </option>
                ))}
              </select>
              <button type="submit" className="secondary" disabled={changeRole.isPending || role === member.role}>
                {changeRole.isPending ? 'Saving…' : 'Change role'}
              </button>
            </form>
          )}
        </td>
        <td>
          <Time value={member.created_at} />
        </td>
        <td>
          {member.role === 'owner' ? null : (
            <ConfirmButton
              label="Remove"
              accessibleLabel={`Remove ${member.email}`}
              question={isMe ? 'Leave this tenant? You lose access to it.' : `Remove ${label} from this tenant?`}
              confirmLabel={isMe ? 'Leave tenant' : 'Remove member'}
              pending={remove.isPending}
              onConfirm={() => remove.mutate()}
            />
          )}
        </td>
      </tr>
      {error ? (
        <tr>
          <td colSpan={5}>
            <ErrorNotice error={error} title={changeRole.error ? `Could not change the role of ${member.email}` : `Could not remove ${member.email}`} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

type NewMember = RequestBody<'/api/v1/tenants/{tenant_id}/members', 'post'>;

function AddMember({ tenantId, onAdded, onCancel }: { tenantId: string; onAdded: (member: Member) => void; onCancel: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const mutation = useMutation({
    mutationFn: (member: NewMember) => call(client.POST('/api/v1/tenants/{tenant_id}/members', { params: { path: { tenant_id: tenantId } }, body: member })),
    onSuccess: async (member) => {
      await invalidate('members');
      onAdded(member);
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const { email = '', role = 'member' } = formValues(event.currentTarget);
    // The select offers only grantable roles; what else arrives goes to the API, whose answer is shown.
    mutation.mutate({ email, role: role as GrantableRole });
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="add-member-title" noValidate>
      <h2 id="add-member-title">Add a member</h2>
      <ErrorNotice error={mutation.error} title="Could not add the member" />
      <Field label="E-mail" field="email" error={mutation.error} hint="Of someone who already has an account on this platform.">
        <input name="email" type="email" required autoFocus autoComplete="off" />
      </Field>
      <Field label="Role" field="role" error={mutation.error} hint={<RoleHints />}>
        <select name="role" defaultValue="member">
          {ROLE_NAMES.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </Field>
      <div className="form-actions">
        <button type="submit" disabled={mutation.isPending}>
          {mutation.isPending ? 'Adding…' : 'Add to tenant'}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function RoleHints() {
  return (
    <>
      {ROLE_NAMES.map((name) => (
        <span key={name} className="role-hint">
          {ROLES[name]}.{' '}
        </span>
      ))}
    </>
  );
}
