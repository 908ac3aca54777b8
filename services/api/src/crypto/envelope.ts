// Envelope encryption lives in @dte/secrets (shared with the signer and the uploader, which
// open certificates and CAF keys in memory); re-exported here so the api's imports stay put.
export * from '@dte/secrets';
