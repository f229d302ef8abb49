import { defineEntity, p } from '@mikro-orm/postgresql';

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.string().primary(),
    /** Lower case; unique across the platform (`users_email_key`). */
    email: p.string(),
    /** PHC string of the scrypt hash, parameters included (see auth/passwords.ts). */
    passwordHash: p.string().hidden(),
    fullName: p.string(),
    isActive: p.boolean(),
    createdAt: p.datetime(),
  },
});

export class User extends UserSchema.class {}
UserSchema.setClass(User);
