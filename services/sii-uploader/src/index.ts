// @dte/sii-uploader: the uploader worker, for its main and for in-process tests.
export * from './uploader';
export { loadConfig, type Config, type UploaderSettings } from './config';
