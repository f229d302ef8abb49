import { useQueryClient } from '@tanstack/react-query';
import { createRoute, Link, Navigate, Outlet, redirect, useNavigate } from '@tanstack/react-router';
import { useSession } from '../api/session-context.js';
import { rootRoute } from './root.js';

/** Every page behind sign-in, in the console's frame: navigation, tenant switcher, sign-out. */
export const appRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: 'app',
  beforeLoad: ({ context, location }) => {
    if (context.session.snapshot.status !== 'signed-in') throw redirect({ to: '/sign-in', search: { next: location.href } });
  },
  component: AppFrame,
});

const NAVIGATION = [
  { to: '/agents', label: 'Agents' },
  { to: '/tools', label: 'Tools' },
  { to: '/datasets', label: 'Datasets' },
  { to: '/evals', label: 'Evals' },
  { to: '/memory', label: 'Memory' },
  { to: '/workflows', label: 'Workflows' },
  { to: '/webhooks', label: 'Webhooks' },
  { to: '/settings/api-keys', label: 'API keys' },
  { to: '/settings/members', label: 'Members' },
  { to: '/settings/credits', label: 'Credits' },
] as const;

function AppFrame() {
  const { session, state } = useSession();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  if (state.status !== 'signed-in' || !state.user) return <Navigate to="/sign-in" search={{}} />;
  const signOut = () => {
    session.signOut();
    queryClient.clear();
    void navigate({ to: '/sign-in', search: {} });
  };
  return (
    <div className="frame">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/agents" className="brand">
          Agent platform
        </Link>
        <div className="topbar-end">
          <label className="tenant-switcher">
            <span>Tenant</span>
            <select
              value={state.tenantId ?? ''}
              onChange={(event) => {
                session.switchTenant(event.target.value);
                void navigate({ to: '/agents' });
              }}
            >
              {state.user.tenants.map((tenant) => (
                <option key={tenant.id} value={tenant.id}>
                  {tenant.name} ({tenant.role})
                </option>
              ))}
            </select>
          </label>
          <span className="user-email">{state.user.email}</span>
          <button type="button" className="secondary" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <nav className="sidebar" aria-label="Console">
        <ul>
          {NAVIGATION.map((item) => (
            <li key={item.to}>
              <Link to={item.to} activeProps={{ 'aria-current': 'page', className: 'active' }}>
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}
