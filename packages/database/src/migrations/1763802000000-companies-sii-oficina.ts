import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `companies.sii_oficina`: the SII unit of the company's domicile, printed "S.I.I. - <oficina>"
 * under the emitter box of the printed form (issue 11). Nullable: until it is captured the
 * printed form shows the company's comuna there.
 */
export class CompaniesSiiOficina1763802000000 implements MigrationInterface {
  name = 'CompaniesSiiOficina1763802000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE companies ADD COLUMN sii_oficina text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE companies DROP COLUMN sii_oficina`);
  }
}
