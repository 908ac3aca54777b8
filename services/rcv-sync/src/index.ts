export { RcvSyncService, COMMAND_GROUP, STATUS_GROUP } from './sync-service';
export { siiRcvSource } from './source';
export { loadConfig, type Config, type SyncSettings } from './config';
