import { PreparedStatement, type EntityManager } from '@agent-platform/kit/db';
import type { Role } from '../tenants/tenants.entity.js';
import { User } from './users.entity.js';

/** The unique index that makes a duplicate e-mail a conflict, even between racing registrations. */
export const USERS_EMAIL_KEY = 'users_email_key';

/** A user with every membership, oldest first: what GetCurrentUser answers. */
export interface UserProfile {
  id: string;
  email: string;
  fullName: string;
  isActive: boolean;
  createdAt: Date;
  tenants: { id: string; name: string; role: Role }[];
}

interface ProfileRow {
  id: string;
  email: string;
  full_name: string;
  is_active: boolean;
  created_at: Date;
  tenants: { id: string; name: string; role: Role }[];
}

// One round trip, planned once per connection: it is read on every authenticated /auth/me.
const profileRead = new PreparedStatement<ProfileRow>('identity_user_profile', `
  select u.id, u.email, u.full_name, u.is_active, u.created_at,
         coalesce(json_agg(json_build_object('id', t.id, 'name', t.name, 'role', m.role)
                           order by m.created_at, m.tenant_id) filter (where m.tenant_id is not null), '[]') as tenants
    from users u
    left join memberships m on m.user_id = u.id
    left join tenants t on t.id = m.tenant_id
   where u.id = ?
   group by u.id`);

export class UsersRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async findProfile(id: string): Promise<UserProfile | undefined> {
    const [row] = await profileRead.rows(this.em, [id]);
    if (!row) return undefined;
    return { id: row.id, email: row.email, fullName: row.full_name, isActive: row.is_active, createdAt: new Date(row.created_at), tenants: row.tenants };
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
