// Every entity of the service. Add a new entity by importing its class and appending it to
// `entities` (and re-exporting it).
import { ProcessedEvent } from './processed-event';

export { ProcessedEvent };

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const entities: Function[] = [ProcessedEvent];
