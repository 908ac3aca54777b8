import { buildEnvioDte, stampAndSignDte } from '../../src';
import type { TipoDte } from '../../src/model';
import { cafFor, SENDER_RUT, testCredentials, today } from './credentials';
import { EMISOR_RUT, sampleDocument } from './documents';

/**
 * An EnvioDTE of sample documents of `tipos`, folios from `firstFolio`, each stamped with its
 * type's test CAF and signed, the envelope signed too, all with the test credential and one
 * timestamp: the signed DTEs and the envelope's bytes.
 */
export function signedSampleEnvio(
  tipos: readonly TipoDte[],
  firstFolio: number,
  fchResol = '2014-08-22',
): { dtes: string[]; envio: Buffer } {
  const { credential } = testCredentials();
  const timestamp = new Date();
  const dtes = tipos.map((tipo, i) =>
    stampAndSignDte(sampleDocument(tipo, firstFolio + i, today()), {
      caf: cafFor(tipo).caf,
      credential,
      timestamp,
    }),
  );
  const envio = buildEnvioDte(dtes, {
    rutEmisor: EMISOR_RUT,
    rutEnvia: SENDER_RUT,
    fchResol,
    nroResol: 0,
    credential,
    timestamp,
  });
  return { dtes, envio };
}
