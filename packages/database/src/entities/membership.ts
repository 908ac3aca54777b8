import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type MemberRole = 'owner' | 'admin' | 'member';

/** A user's role in an organization. */
@Entity({ name: 'memberships' })
export class Membership {
  @PrimaryColumn({ name: 'user_id', type: 'uuid' })
  userId!: string;

  @PrimaryColumn({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Column({ type: 'text' })
  role!: MemberRole;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
