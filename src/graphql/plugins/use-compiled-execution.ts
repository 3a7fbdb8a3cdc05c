// Executes operations compiled by graphql-jit: an operation becomes a JavaScript function once, then
// runs without graphql's generic executor walking the document, building an info object and a path for
// every field, and coercing every argument, on every request. A dashboard has about two hundred fields.
//
// What runs compiled, and what does not:
// - An operation is compiled at its second execution (GRAPHQL_JIT_ON_RUN; compiling costs more than
//   one execution, so a document sent once, or an attacker's stream of new documents, never pays it),
//   and kept per document *and* operation name (a document may hold several operations: each has its
//   own). Documents are held weakly: an entry lives as long as yoga's parse cache keeps its document.
// - Compiled operations are kept within a budget of bytes (COMPILED_CACHE_MAX_BYTES), least recently
//   run out first: a compiled operation holds its generated code (heap grows with the fields it
//   selects) and its document, and a stranger can send every new document twice. One evicted is
//   counted from zero again; one larger than the whole budget runs on the standard executor.
// - @defer and @stream (graphql-jit has no incremental delivery), subscriptions (use-live.ts serves
//   them), anything the compiler refuses, and variables that do not coerce run on the standard
//   executor, so they are answered exactly as before (with our scalars' messages and HTTP 400).
// - What it needs to know of an operation (its fragments, directives, size, variables) it reads from
//   the request's plan (schema/plan.ts); compiled operations are kept per plan of an operation.
// - Field errors of a compiled run are made again as the standard executor makes them (located at
//   their field nodes): yoga rebuilds errors from their nodes, and graphql-jit's carry only locations.
import { Kind, locatedError, type ExecutionResult, type FieldNode, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { GatewayContext } from '../../schema/context.js';
import type { OperationPlan } from '../../schema/plan.js';
import { integer } from '../../settings.js';
import { documentBytes } from '../document-cache.js';
import type { PlanStep } from './use-plan.js';

export interface CompiledExecutionOptions {
  /** The execution of an operation at which it is compiled (GRAPHQL_JIT_ON_RUN; default DEFAULT_JIT_ON_RUN); 0: never. */
  onRun?: number;
  /** Estimated heap bytes of compiled operations kept (COMPILED_CACHE_MAX_BYTES; default DEFAULT_COMPILED_CACHE_MAX_BYTES). */
  maxBytes?: number;
}

/** When operations are compiled with graphql-jit, and how many are kept. */
export const COMPILED_EXECUTION_SETTINGS = {
  jitOnRun: integer('GRAPHQL_JIT_ON_RUN', {
    fallback: 2,
    min: 0,
    max: 1_000_000,
    unit: 'run',
    doc: 'the run of an operation at which it is compiled with graphql-jit; 1: at once, 0: never',
  }),
  compiledCacheMaxBytes: integer('COMPILED_CACHE_MAX_BYTES', {
    fallback: 16 * 1024 * 1024,
    min: 0,
    max: 16 * 1024 ** 3,
    unit: 'bytes',
    doc: 'operations compiled by graphql-jit kept, bounded by their estimated heap',
  }),
};
const DEFAULT_JIT_ON_RUN = COMPILED_EXECUTION_SETTINGS.jitOnRun.fallback;
const DEFAULT_COMPILED_CACHE_MAX_BYTES = COMPILED_EXECUTION_SETTINGS.compiledCacheMaxBytes.fallback;

/**
 * Heap of compiled code per selected field, and of what every compiled operation has: above what V8's heap
 * shows for them, so that the budget is not overrun (docs/performance.md#memory).
 */
const COMPILED_BYTES_PER_FIELD = 1536;
const COMPILED_BYTES_BASE = 16 * 1024;

/** What keeping an operation compiled costs: the code, and the document it holds alive. */
function compiledBytes({ document }: OperationPlan): number {
  const source = document.document.loc?.source.body ?? '';
  return COMPILED_BYTES_BASE + COMPILED_BYTES_PER_FIELD * document.fieldCount + documentBytes(source, document.document);
}

interface Compiled {
  query: CompiledQuery['query'];
  operation: OperationPlan;
  run?: CompiledRun;
}

interface Entry {
  executions: number;
  /** undefined: not compiled yet; null: runs on the standard executor for good. */
  compiled: Compiled | null | undefined;
}

function compile(schema: GraphQLSchema, operation: OperationPlan): Compiled | null {
  if (operation.type === 'subscription' || operation.document.incremental) return null;
  try {
    const compiled = compileQuery(schema, operation.document.document, operation.name, {
      customJSONSerializer: false,
      disablingCapturingStackErrors: true,
    });
    return isCompiledQuery(compiled) ? { query: compiled.query, operation } : null;
  } catch {
    return null; // the standard executor runs it and reports whatever is wrong
  }
}

/** The field nodes a response path leads to (every node of that response key, through fragments). */
function fieldNodesAt(compiled: Compiled, path: readonly (string | number)[]): FieldNode[] {
  let sets: SelectionSetNode[] = [compiled.operation.definition.selectionSet];
  let nodes: FieldNode[] = [];
  for (const key of path) {
    if (typeof key === 'number') continue;
    nodes = [];
    const collect = (set: SelectionSetNode): void => {
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          if ((selection.alias ?? selection.name).value === key) nodes.push(selection);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          collect(selection.selectionSet);
        } else {
          const fragment = compiled.operation.document.fragments[selection.name.value];
          if (fragment) collect(fragment.selectionSet);
        }
      }
    };
    sets.forEach(collect);
    sets = nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
  }
  return nodes;
}

/** The result with its errors located as the standard executor locates them, errors first. */
function relocated(result: ExecutionResult, compiled: Compiled): ExecutionResult {
  if (!result.errors?.length) return result;
  const errors = result.errors.map((error) => {
    const path = error.path ?? [];
    return locatedError(error.originalError ?? new Error(error.message), fieldNodesAt(compiled, path), path);
  });
  const { errors: _unlocated, ...rest } = result;
  return { errors, ...rest };
}

/** An operation compiled: run with its context and (raw) variables, its errors located as the standard executor's. */
export type CompiledRun = (
  context: object,
  variables: Record<string, unknown> | null | undefined,
) => ExecutionResult | Promise<ExecutionResult>;

export interface CompiledExecutionStep extends Plugin<GatewayContext> {
  /** The operation's compiled run, if it is compiled and kept now (counted as run); undefined otherwise. */
  compiledOf(operation: OperationPlan): CompiledRun | undefined;
}

/** How a compiled operation runs: graphql-jit's function, its errors relocated. */
function runOf(compiled: Compiled): CompiledRun {
  return (context, variables) => {
    const result = compiled.query(undefined, context, variables);
    return result instanceof Promise ? result.then((settled) => relocated(settled, compiled)) : relocated(result, compiled);
  };
}

export function useCompiledExecution(
  plan: PlanStep,
  { onRun = DEFAULT_JIT_ON_RUN, maxBytes = DEFAULT_COMPILED_CACHE_MAX_BYTES }: CompiledExecutionOptions = {},
): CompiledExecutionStep {
  if (onRun === 0) return { compiledOf: () => undefined };
  // Entries live as long as their operation's plan, which lives as long as yoga's parse cache keeps its document.
  const entries = new WeakMap<OperationPlan, Entry>();
  // Holds the compiled entries (strongly) within the budget; an entry pushed out is counted again.
  const kept = new LRUCache<Entry, number>({
    maxSize: Math.max(1, maxBytes),
    sizeCalculation: (bytes) => bytes,
    dispose: (_bytes, entry) => {
      entry.compiled = undefined;
      entry.executions = 0;
    },
  });
  return {
    compiledOf(operation) {
      const entry = entries.get(operation);
      if (!entry?.compiled) return undefined;
      kept.get(entry); // most recently run
      entry.compiled.run ??= runOf(entry.compiled);
      return entry.compiled.run;
    },
    onExecute({ args, setExecuteFn }) {
      // No plan: an operation name the document does not hold (use-operation-name.ts refuses it before
      // execution; kept here too), so entries are bounded by the document's operations.
      const planned = plan.of(args.contextValue);
      if (!planned) return;
      const { operation } = planned;
      let entry = entries.get(operation);
      if (!entry) entries.set(operation, (entry = { executions: 0, compiled: undefined }));
      if (entry.compiled === undefined && ++entry.executions >= onRun) {
        entry.compiled = compile(args.schema, operation);
        if (entry.compiled) {
          kept.set(entry, compiledBytes(operation));
          // Larger than the whole budget: not kept, so not compiled either.
          if (!kept.has(entry)) entry.compiled = null;
        }
      } else if (entry.compiled) {
        kept.get(entry); // most recently run
      }
      const { compiled } = entry;
      // Variables that do not coerce: the standard executor refuses them with our scalars' messages.
      if (!compiled || planned.selection === null) return;
      compiled.run ??= runOf(compiled);
      const run = compiled.run;
      setExecuteFn((execution) => run(execution.contextValue as object, execution.variableValues));
    },
  };
}
