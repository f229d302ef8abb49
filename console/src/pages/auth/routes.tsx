import type { RequestBody } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { createRoute, Link, useNavigate } from '@tanstack/react-router';
import type { FormEvent } from 'react';
import { call } from '../../api/call.js';
import { useSession } from '../../api/session-context.js';
import { rootRoute } from '../../routes/root.js';
import { ErrorNotice } from '../../ui/feedback.js';
import { Field, formValues } from '../../ui/form.js';

/** Where to go after signing in: a page of the console, never another site. */
const validateSearch = (search: Record<string, unknown>): { next?: string } => (typeof search.next === 'string' && search.next.startsWith('/') && !search.next.startsWith('//') ? { next: search.next } : {});

export const signInRoute = createRoute({ getParentRoute: () => rootRoute, path: 'sign-in', validateSearch, component: SignIn });
export const registerRoute = createRoute({ getParentRoute: () => rootRoute, path: 'register', validateSearch, component: Register });
export const authRoutes = [signInRoute, registerRoute] as const;

type Credentials = { email: string; password: string };
type Registration = RequestBody<'/api/v1/auth/register', 'post'>;

/** Signs in with the credentials, then opens the page the visitor was going to. */
function useSignIn(next: string | undefined) {
  const { session } = useSession();
  const navigate = useNavigate();
  return async (credentials: Credentials) => {
    const tokens = await call(session.publicClient.POST('/api/v1/auth/login', { body: { username: credentials.email, password: credentials.password } }));
    await session.signIn(tokens);
    // `next` is a location inside the router (no basepath): as an href, the router adds `/console`.
    if (next) await navigate({ href: next });
    else await navigate({ to: '/agents' });
  };
}

function SignIn() {
  const { next } = signInRoute.useSearch();
  const signIn = useSignIn(next);
  const mutation = useMutation({ mutationFn: signIn });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const { email = '', password = '' } = formValues(event.currentTarget);
    mutation.mutate({ email, password });
  };
  return (
    <main className="auth">
      <h1>Sign in</h1>
      <form onSubmit={submit} noValidate>
        <ErrorNotice error={mutation.error} title="Could not sign in" />
        <Field label="E-mail" field="email" error={mutation.error}>
          <input name="email" type="email" autoComplete="username" required />
        </Field>
        <Field label="Password" field="password" error={mutation.error}>
          <input name="password" type="password" autoComplete="current-password" required />
        </Field>
        <button type="submit" disabled={mutation.isPending}>
          {mutation.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p>
        New here? <Link to="/register" search={next ? { next } : {}}>Create an account</Link>
      </p>
    </main>
  );
}

function Register() {
  const { session } = useSession();
  const { next } = registerRoute.useSearch();
  const signIn = useSignIn(next);
  const mutation = useMutation({
    mutationFn: async (registration: Registration) => {
      await call(session.publicClient.POST('/api/v1/auth/register', { body: registration }));
      await signIn({ email: registration.email, password: registration.password });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const { email = '', password = '', full_name, company } = formValues(event.currentTarget);
    mutation.mutate({ email, password, ...(full_name ? { full_name } : {}), ...(company ? { company } : {}) });
  };
  return (
    <main className="auth">
      <h1>Create an account</h1>
      <form onSubmit={submit} noValidate>
        <ErrorNotice error={mutation.error} title="Could not create the account" />
        <Field label="E-mail" field="email" error={mutation.error}>
          <input name="email" type="email" autoComplete="username" required />
        </Field>
        <Field label="Password" field="password" error={mutation.error} hint="8 to 128 characters.">
          <input name="password" type="password" autoComplete="new-password" required />
        </Field>
        <Field label="Full name" field="full_name" error={mutation.error}>
          <input name="full_name" autoComplete="name" />
        </Field>
        <Field label="Company" field="company" error={mutation.error} hint="Names your first tenant.">
          <input name="company" autoComplete="organization" />
        </Field>
        <button type="submit" disabled={mutation.isPending}>
          {mutation.isPending ? 'Creating…' : 'Create account'}
        </button>
      </form>
      <p>
        Have an account? <Link to="/sign-in" search={next ? { next } : {}}>Sign in</Link>
      </p>
    </main>
  );
}
