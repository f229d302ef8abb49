import type { EntityManager } from '@agent-platform/kit/db';
import { User } from './users.entity.js';

/** The unique index that makes a duplicate e-mail a conflict, even between racing registrations. */
export const USERS_EMAIL_KEY = 'users_email_key';

export class UsersRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  findById(id: string): Promise<User | null> {
    return this.em.findOne(User, { id });
  }

  findByEmail(email: string): Promise<User | null> {
    return this.em.findOne(User, { email });
  }

  findByIds(ids: readonly string[]): Promise<User[]> {
    return ids.length === 0 ? Promise.resolve([]) : this.em.find(User, { id: { $in: [...ids] } });
  }

  /** Inserts now, inside the caller's transaction; a duplicate e-mail fails on USERS_EMAIL_KEY. */
  async insert(user: Pick<User, 'id' | 'email' | 'passwordHash' | 'fullName' | 'createdAt'>): Promise<User> {
    const entity = this.em.create(User, { ...user, isActive: true });
    await this.em.flush();
    return entity;
  }

  async updatePasswordHash(id: string, passwordHash: string): Promise<void> {
    await this.em.nativeUpdate(User, { id }, { passwordHash });
  }
}
