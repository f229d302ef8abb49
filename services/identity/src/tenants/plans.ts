/** The plans a tenant can be on (decisions §9): apart from the entity, so configuration reads them without the ORM. */
export const PLANS = ['free', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];
