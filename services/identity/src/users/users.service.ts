import { DomainError, newId } from '@agent-platform/kit';
import { isUniqueViolation, type EntityManager } from '@agent-platform/kit/db';
import type { PasswordHasher } from '../auth/passwords.js';
import type { BillingService } from '../billing/billing.service.js';
import { FieldErrors } from '@agent-platform/kit';
import { characterCount, isValidEmail, normalizeEmail, optionalText } from '../shared/validation.js';
import type { Plan } from '../tenants/plans.js';
import type { TenantsRepository } from '../tenants/tenants.repository.js';
import type { User } from './users.entity.js';
import { USERS_EMAIL_KEY, type UserProfile, type UsersRepository } from './users.repository.js';
import type { Actor } from '@agent-platform/kit';

export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 128;
const MAX_NAME_LENGTH = 200;

export interface UsersServiceOptions {
  em: EntityManager;
  users: UsersRepository;
  tenants: TenantsRepository;
  billing: BillingService;
  passwords: PasswordHasher;
  defaultPlan: Plan;
  welcomeCredits: number;
}

export interface RegistrationRequest {
  email: string;
  password: string;
  fullName?: string | undefined;
  company?: string | undefined;
}

export interface Registration {
  user: User;
  tenantId: string;
  /** The new tenant's balance: the welcome credits. */
  credits: number;
}

export class UsersService {
  private readonly options: UsersServiceOptions;

  constructor(options: UsersServiceOptions) {
    this.options = options;
  }

  /**
   * decisions §3: the user, a tenant they own and the welcome credits, in one transaction. A taken
   * e-mail is a conflict; two registrations racing for one e-mail are settled by the unique index.
   */
  async register(request: RegistrationRequest): Promise<Registration> {
    const email = normalizeEmail(request.email);
    const fullName = optionalText(request.fullName);
    const company = optionalText(request.company);
    validateRegistration(email, request.password, fullName, company);

    const passwordHash = await this.options.passwords.hash(request.password);
    const now = new Date();
    const { em, users, tenants, billing, defaultPlan, welcomeCredits } = this.options;
    try {
      return await em.transactional(async () => {
        const tenant = await tenants.insertTenant({
          id: newId('tenant'),
          name: company ?? `${fullName ?? email}'s workspace`,
          plan: defaultPlan,
          balance: 0,
          createdAt: now,
        });
        const user = await users.insert({ id: newId('user'), email, passwordHash, fullName: fullName ?? '', createdAt: now });
        await tenants.insertMembership({ tenantId: tenant.id, userId: user.id, role: 'owner', createdAt: now });
        const credits = welcomeCredits > 0 ? await billing.grant(tenant.id, welcomeCredits, 'welcome_grant', 'Welcome credits', now) : 0;
        return { user, tenantId: tenant.id, credits };
      });
    } catch (error) {
      if (isUniqueViolation(error, USERS_EMAIL_KEY)) {
        throw new DomainError('conflict', 'An account with this e-mail address already exists.', {
          details: [{ field: 'email', message: 'is already registered' }],
          cause: error,
        });
      }
      throw error;
    }
  }

  /** The calling user with every membership. Unauthorized when the user is gone or deactivated. */
  async getCurrentUser(actor: Actor): Promise<UserProfile> {
    const profile = await this.options.users.findProfile(actor.userId);
    if (!profile?.isActive) throw new DomainError('unauthorized', 'The user of this credential no longer exists.');
    return profile;
  }
}

function validateRegistration(email: string, password: string, fullName: string | undefined, company: string | undefined): void {
  const errors = new FieldErrors();
  if (email === '') errors.add('email', 'is required');
  else if (!isValidEmail(email)) errors.add('email', 'must be a valid e-mail address');
  const passwordLength = characterCount(password);
  if (passwordLength === 0) errors.add('password', 'is required');
  else if (passwordLength < MIN_PASSWORD_LENGTH || passwordLength > MAX_PASSWORD_LENGTH) {
    errors.add('password', `must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long`);
  }
  if (fullName !== undefined && characterCount(fullName) > MAX_NAME_LENGTH) errors.add('full_name', `must be at most ${MAX_NAME_LENGTH} characters`);
  if (company !== undefined && characterCount(company) > MAX_NAME_LENGTH) errors.add('company', `must be at most ${MAX_NAME_LENGTH} characters`);
  errors.throwIfAny();
}
