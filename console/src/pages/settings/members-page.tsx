import type { RequestBody, ResponseBody } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useSession, useTenantQuery } from '../../api/session-context.js';
import { Empty, ErrorNotice } from '../../ui/feedback.js';
import { ConfirmButton } from '../../ui/confirm-button.js';
import { PagedTable, type Column } from '../../ui/data-table.js';
import { Field, formValues } from '../../ui/form.js';
import { FormActions, useCreateForm } from '../../ui/form-actions.js';
import { Options } from '../../ui/options.js';
import { Page, Time } from '../../ui/page.js';
import './settings.css';

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
  const adding = useCreateForm<Member>();
  const added = adding.made;
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
        <button type="button" disabled={adding.open} onClick={adding.start}>
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
      {adding.open ? <AddMember tenantId={tenantId} onAdded={adding.done} onCancel={adding.cancel} /> : null}
      <PagedTable
        query={members}
        loadingLabel="Loading members…"
        page={page}
        perPage={PER_PAGE}
        onPage={(next) => void navigate({ to: '/settings/members', search: { page: next } })}
        label="Member list"
        columns={memberColumns(tenantId, state.user?.id)}
        rowKey={(member) => member.user_id}
        empty={<Empty title="No members on this page" />}
      />
    </Page>
  );
}

function memberColumns(tenantId: string, myId: string | undefined): Column<Member>[] {
  return [
    {
      header: 'Name',
      cell: (member) => (
        <>
          {member.full_name || <span className="muted">—</span>}
          {member.user_id === myId ? <span className="muted"> (you)</span> : null}
        </>
      ),
    },
    { header: 'E-mail', cell: (member) => member.email },
    { header: 'Role', cell: (member) => (member.role === 'owner' ? <span className="badge">owner</span> : <ChangeRole key={member.role} tenantId={tenantId} member={member} />) },
    { header: 'Joined', cell: (member) => <Time value={member.created_at} /> },
    { header: 'Actions', headerHidden: true, cell: (member) => (member.role === 'owner' ? null : <RemoveMember tenantId={tenantId} member={member} />) },
  ];
}

/**
 * After a change of a membership: a change to one's own changes what the session may do, so the
 * user is read again first (leaving a tenant moves the session to another, whose members are then shown).
 */
function useMembershipChanged(tenantId: string, member: Member) {
  const invalidate = useInvalidate();
  const { session, state } = useSession();
  return async (left: boolean) => {
    if (member.user_id === state.user?.id) {
      // Every call carries the session's tenant, /auth/me included, and the one just left would
      // answer 403 (which ends the session): move to another tenant before reading the user.
      const elsewhere = state.user.tenants.find((membership) => membership.id !== tenantId);
      if (left && elsewhere) session.switchTenant(elsewhere.id);
      await session.loadUser();
    }
    await invalidate('members');
  };
}

function membershipPath(tenantId: string, member: Member) {
  return { params: { path: { tenant_id: tenantId, user_id: member.user_id } } };
}

function ChangeRole({ tenantId, member }: { tenantId: string; member: Member }) {
  const client = useClient();
  const changed = useMembershipChanged(tenantId, member);
  const [role, setRole] = useState(member.role);
  const changeRole = useMutation({
    mutationFn: (next: GrantableRole) => call(client.PATCH('/api/v1/tenants/{tenant_id}/members/{user_id}', { ...membershipPath(tenantId, member), body: { role: next } })),
    onSuccess: () => changed(false),
  });
  const submitRole = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (isGrantableRole(role)) changeRole.mutate(role);
  };
  return (
    <>
      <form className="row-actions" onSubmit={submitRole}>
        <select aria-label={`Role of ${member.email}`} value={role} onChange={(event) => setRole(event.target.value)}>
          <Options values={ROLE_NAMES} />
        </select>
        <button type="submit" className="secondary" disabled={changeRole.isPending || role === member.role}>
          {changeRole.isPending ? 'Saving…' : 'Change role'}
        </button>
      </form>
      <ErrorNotice error={changeRole.error} title={`Could not change the role of ${member.email}`} />
    </>
  );
}

function RemoveMember({ tenantId, member }: { tenantId: string; member: Member }) {
  const client = useClient();
  const { state } = useSession();
  const changed = useMembershipChanged(tenantId, member);
  const remove = useMutation({
    mutationFn: () => call(client.DELETE('/api/v1/tenants/{tenant_id}/members/{user_id}', membershipPath(tenantId, member))),
    onSuccess: () => changed(true),
  });
  const isMe = member.user_id === state.user?.id;
  return (
    <>
      <ConfirmButton
        label="Remove"
        accessibleLabel={`Remove ${member.email}`}
        question={isMe ? 'Leave this tenant? You lose access to it.' : `Remove ${member.full_name || member.email} from this tenant?`}
        confirmLabel={isMe ? 'Leave tenant' : 'Remove member'}
        pending={remove.isPending}
        onConfirm={() => remove.mutate()}
      />
      <ErrorNotice error={remove.error} title={`Could not remove ${member.email}`} />
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
          <Options values={ROLE_NAMES} />
        </select>
      </Field>
      <FormActions submitLabel="Add to tenant" pendingLabel="Adding…" pending={mutation.isPending} onCancel={onCancel} />
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
