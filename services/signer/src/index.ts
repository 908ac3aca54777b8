// @dte/signer: the signer worker, for its main and for in-process tests.
export * from './signer';
export { loadConfig, type Config } from './config';
export { OpenedCafs } from './opened-cafs';
