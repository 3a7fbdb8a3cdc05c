// The sandbox: a bundled, faithful implementation of the analytics REST API (docs/CONTRACT.md) with
// seeded demo data, fault and latency knobs, and a request log for tests and benchmarks.
export type {
  Dialect,
  RequestLogEntry,
  Sandbox,
  SandboxOptions,
  ScriptedFault,
} from './types.js';
export { startSandbox } from './server.js';
