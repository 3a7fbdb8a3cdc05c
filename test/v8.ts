// What V8 makes of an object, for tests of objects the gateway makes per request: one kept in dictionary
// mode (an object literal with a getter or setter, a deleted property) keeps its young objects alive
// through young collections, so everything its request allocated is copied and kept until a full one
// (docs/performance.md#garbage). Natives syntax is allowed in the test's worker only.
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--allow-natives-syntax');

/** Whether V8 keeps `object`'s properties in fast mode (not a dictionary). */
export const hasFastProperties = new Function('object', 'return %HasFastProperties(object)') as (object: object) => boolean;
