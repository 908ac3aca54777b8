/**
 * @dte/secrets: envelope encryption of secrets at rest (`seal`, `open`, `LocalKeyWrapper`) and
 * the names (AAD) each stored secret is sealed under, shared by the api (which seals) and the
 * workers (which open, in memory only; `StoredCredentials` keeps opened certificates for a while).
 */
export * from './envelope';
export * from './aad';
export * from './credentials';
export * from './stored-credentials';
export * from './reseal';
export * from './kms-errors';
