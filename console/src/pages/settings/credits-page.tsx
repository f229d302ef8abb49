import type { ResponseBody } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { Empty, ErrorNotice, QueryState } from '../../ui/feedback.js';
import { PagedTable, type Column } from '../../ui/data-table.js';
import { Field, formValues } from '../../ui/form.js';
import { Page, Time } from '../../ui/page.js';
import './settings.css';

const PER_PAGE = 20;
const route = getRouteApi('/app/settings/credits');

type Purchase = ResponseBody<'/api/v1/billing/purchases', 'post', 201>;

/** The minute window of the plan's rate limit (decisions §9), as the response's headers told it. */
interface RateLimit {
  limit: number;
  remaining: number;
  /** When the window starts again, ms since the epoch. */
  resetsAt: number | undefined;
}

/** X-RateLimit-*: absent when the plan has no per-minute limit. */
function rateLimitOf(headers: Headers): RateLimit | undefined {
  const limit = Number(headers.get('X-RateLimit-Limit') ?? Number.NaN);
  const remaining = Number(headers.get('X-RateLimit-Remaining') ?? Number.NaN);
  const reset = Number(headers.get('X-RateLimit-Reset') ?? Number.NaN);
  if (!Number.isFinite(limit) || !Number.isFinite(remaining)) return undefined;
  return { limit, remaining, resetsAt: Number.isFinite(reset) ? reset * 1000 : undefined };
}

const numbers = new Intl.NumberFormat();

type LedgerEntry = ResponseBody<'/api/v1/billing/transactions', 'get'>['items'][number];

const LEDGER_COLUMNS: Column<LedgerEntry>[] = [
  { header: 'When', cell: (entry) => <Time value={entry.created_at} /> },
  { header: 'Kind', cell: (entry) => entry.kind },
  { header: 'Description', cell: (entry) => entry.description },
  {
    header: 'Amount',
    className: (entry) => (entry.amount < 0 ? 'amount-debit' : 'amount-credit'),
    cell: (entry) => (
      <>
        {entry.amount > 0 ? '+' : ''}
        {numbers.format(entry.amount)}
      </>
    ),
  },
  { header: 'Balance after', cell: (entry) => numbers.format(entry.balance_after) },
];

export function CreditsPage() {
  const { page = 1 } = route.useSearch();
  const navigate = useNavigate();
  const [purchase, setPurchase] = useState<Purchase>();
  const credits = useTenantQuery(['billing', 'credits'], async (client) => {
    const answer = client.GET('/api/v1/billing/credits');
    const body = await call(answer);
    const { response } = await answer;
    return { ...body, rateLimit: rateLimitOf(response.headers) };
  });
  const ledger = useTenantQuery(['billing', 'transactions', page], (client) => call(client.GET('/api/v1/billing/transactions', { params: { query: { page, per_page: PER_PAGE } } })));
  return (
    <Page title="Credits">
      <QueryState query={credits} loadingLabel="Loading the balance…">
        {(found) => (
          <dl className="figures">
            <div className="figure">
              <dt>Balance</dt>
              <dd>{numbers.format(found.balance)} credits</dd>
            </div>
            <div className="figure">
              <dt>Low-credit threshold</dt>
              <dd>
                {numbers.format(found.threshold)}
                <small>billing.credits.low fires when a debit goes below it</small>
              </dd>
            </div>
            <div className="figure">
              <dt>Plan</dt>
              <dd>{found.plan}</dd>
            </div>
            <div className="figure">
              <dt>Rate limit</dt>
              {found.rateLimit ? (
                <dd>
                  {numbers.format(found.rateLimit.limit)} a minute
                  <small>
                    {numbers.format(found.rateLimit.remaining)} left this minute
                    {found.rateLimit.resetsAt ? (
                      <>
                        , resets at <Time value={new Date(found.rateLimit.resetsAt).toISOString()} />
                      </>
                    ) : null}
                  </small>
                </dd>
              ) : (
                <dd>
                  No per-minute limit
                  <small>This plan is not limited per minute.</small>
                </dd>
              )}
            </div>
          </dl>
        )}
      </QueryState>

      <BuyCredits onBought={setPurchase} />
      {purchase ? (
        <p className="notice notice-info" role="status">
          Bought {numbers.format(purchase.credits)} credits ({purchase.status}). The balance is now {numbers.format(purchase.balance)} credits.
        </p>
      ) : null}

      <h2 className="section-title">Ledger</h2>
      <PagedTable
        query={ledger}
        loadingLabel="Loading the ledger…"
        page={page}
        perPage={PER_PAGE}
        onPage={(next) => void navigate({ to: '/settings/credits', search: { page: next } })}
        label="Ledger entries"
        caption="Credit transactions, newest first"
        captionHidden
        columns={LEDGER_COLUMNS}
        rowKey={(entry) => entry.id}
        empty={<Empty title="No transactions yet" />}
      />
    </Page>
  );
}

function BuyCredits({ onBought }: { onBought: (purchase: Purchase | undefined) => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const mutation = useMutation({
    mutationFn: (credits: number) => call(client.POST('/api/v1/billing/purchases', { body: { credits } })),
    onMutate: () => onBought(undefined),
    onSuccess: async (purchase) => {
      // The balance and the ledger both changed.
      await invalidate('billing');
      onBought(purchase);
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const { credits = '' } = formValues(event.currentTarget);
    // What was typed goes to the API as a number, which says what is wrong with it (decisions §9).
    mutation.mutate(Number(credits.trim() === '' ? Number.NaN : credits));
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="buy-credits-title" noValidate>
      <h2 id="buy-credits-title">Buy credits</h2>
      <p className="muted">Only the tenant's owner can buy credits.</p>
      <ErrorNotice error={mutation.error} title="Could not buy credits" />
      <div className="inline-form">
        <Field label="Credits to buy" field="credits" error={mutation.error} hint="A whole number, 1 to 1,000,000.">
          <input name="credits" type="number" inputMode="numeric" min={1} step={1} required />
        </Field>
        <button type="submit" disabled={mutation.isPending}>
          {mutation.isPending ? 'Buying…' : 'Buy credits'}
        </button>
      </div>
    </form>
  );
}
