/** What a payment provider is asked to charge for. */
export interface PaymentRequest {
  purchaseId: string;
  tenantId: string;
  credits: number;
}

export type PaymentResult =
  /** Paid: the credits are granted at once. */
  | { status: 'completed'; providerReference: string | null }
  /** Awaiting the provider (e.g. a checkout page); granted when it confirms. */
  | { status: 'pending'; providerReference: string | null };

/** The port a real provider (Stripe, …) implements; chosen in the composition root. */
export interface PaymentProvider {
  /** Recorded on each purchase, e.g. `built_in`. */
  readonly name: string;
  charge(request: PaymentRequest): Promise<PaymentResult>;
}

/** decisions §9: the built-in provider grants immediately, without charging anyone. */
export class ImmediatePaymentProvider implements PaymentProvider {
  readonly name = 'built_in';

  charge(_request: PaymentRequest): Promise<PaymentResult> {
    return Promise.resolve({ status: 'completed', providerReference: null });
  }
}
