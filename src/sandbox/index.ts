// The sandbox: a bundled, faithful implementation of the analytics REST API (docs/CONTRACT.md) with
// seeded demo data, fault and latency knobs, and a request log for tests and benchmarks.
export type {
  Dialect,
  RequestLog,
  RequestLogEntry,
  Sandbox,
  SandboxKnobs,
  SandboxOptions,
  ScriptedFault,
} from './types.js';
export { startSandbox } from './server.js';
