import { useLayoutEffect, useSyncExternalStore } from 'react';

/**
 * Which of an API failure's field messages a form already shows beside their controls, so that
 * the notice above the form lists only the others (each message once). Kept by the failure
 * itself (each mutation's error is its own object), so no form needs a provider: a Field that
 * shows its message says so before the browser paints, and the notice drawn with the same error
 * leaves it out.
 */
const shownByError = new WeakMap<object, Map<string, number>>();
const listeners = new Set<() => void>();
let version = 0;

function changed(): void {
  version += 1;
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Marks `field` of `error` as shown by its control while this component shows it. */
export function useShowsField(error: unknown, field: string | undefined, showing: boolean): void {
  useLayoutEffect(() => {
    if (!showing || field === undefined || typeof error !== 'object' || error === null) return;
    const shown = shownByError.get(error) ?? new Map<string, number>();
    shownByError.set(error, shown);
    shown.set(field, (shown.get(field) ?? 0) + 1);
    changed();
    return () => {
      const count = (shown.get(field) ?? 1) - 1;
      if (count === 0) shown.delete(field);
      else shown.set(field, count);
      changed();
    };
  }, [error, field, showing]);
}

/** The fields of `error` that controls show themselves. */
export function useShownFields(error: unknown): ReadonlySet<string> {
  useSyncExternalStore(subscribe, () => version);
  if (typeof error !== 'object' || error === null) return new Set();
  return new Set(shownByError.get(error)?.keys());
}
