// Executes operations compiled by graphql-jit, without graphql's generic executor walking the document
// every time. Compiled at its GRAPHQL_JIT_ON_RUN-th run (compiling costs more than a run), kept within
// COMPILED_CACHE_MAX_BYTES (a stranger can send every new document twice). @defer/@stream, subscriptions,
// what the compiler refuses and bad variables run on the standard executor. Field errors are located at
// their field nodes again: yoga rebuilds errors from them.
import { Kind, locatedError, type ExecutionResult, type FieldNode, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { GatewayContext } from '../../schema/context.js';
import type { OperationPlan } from '../../schema/plan.js';
import { HEAP_BYTES, integer } from '../../settings.js';
import { documentBytes } from '../document-cache.js';
import type { PlanStep } from './use-plan.js';

export interface CompiledExecutionOptions {
  /** 0: never. */
  onRun?: number;
  maxBytes?: number;
}

export const COMPILED_EXECUTION_SETTINGS = {
  jitOnRun: integer('GRAPHQL_JIT_ON_RUN', {
    fallback: 2,
    min: 0,
    max: 1_000_000,
    unit: 'run',
    doc: 'the run of an operation at which it is compiled with graphql-jit; 1: at once, 0: never',
  }),
  compiledCacheMaxBytes: integer('COMPILED_CACHE_MAX_BYTES', {
    ...HEAP_BYTES,
    fallback: 16 * 1024 * 1024,
    doc: 'operations compiled by graphql-jit kept, bounded by their estimated heap',
  }),
};
const DEFAULT_JIT_ON_RUN = COMPILED_EXECUTION_SETTINGS.jitOnRun.fallback;
const DEFAULT_COMPILED_CACHE_MAX_BYTES = COMPILED_EXECUTION_SETTINGS.compiledCacheMaxBytes.fallback;

/** Above what V8's heap shows for compiled code, so that the budget is not overrun (docs/performance.md#memory). */
const COMPILED_BYTES_PER_FIELD = 1536;
const COMPILED_BYTES_BASE = 16 * 1024;

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

/** Every field node of a response path's key, through fragments. */
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

/** Errors first, as the standard executor's. */
function relocated(result: ExecutionResult, compiled: Compiled): ExecutionResult {
  if (!result.errors?.length) return result;
  const errors = result.errors.map((error) => {
    const path = error.path ?? [];
    return locatedError(error.originalError ?? new Error(error.message), fieldNodesAt(compiled, path), path);
  });
  const { errors: _unlocated, ...rest } = result;
  return { errors, ...rest };
}

export type CompiledRun = (
  context: object,
  variables: Record<string, unknown> | null | undefined,
) => ExecutionResult | Promise<ExecutionResult>;

export interface CompiledExecutionStep extends Plugin<GatewayContext> {
  /** The operation's compiled run, if it is kept now (counted as run). */
  compiledOf(operation: OperationPlan): CompiledRun | undefined;
}

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
  const entries = new WeakMap<OperationPlan, Entry>();
  // Holds the compiled entries (strongly) within the budget.
  const kept = new LRUCache<Entry, number>({
    maxSize: Math.max(1, maxBytes),
    sizeCalculation: (bytes) => bytes,
    dispose: (_bytes, entry) => {
      entry.compiled = undefined;
      entry.executions = 0;
    },
  });
  const compiledOf = (operation: OperationPlan): CompiledRun | undefined => {
    const entry = entries.get(operation);
    if (!entry?.compiled) return undefined;
    kept.get(entry); // most recently run
    entry.compiled.run ??= runOf(entry.compiled);
    return entry.compiled.run;
  };
  return {
    compiledOf,
    onExecute({ args, setExecuteFn }) {
      // No plan: an operation name the document does not hold; entries stay bounded by its operations.
      const planned = plan.of(args.contextValue);
      if (!planned) return;
      const { operation } = planned;
      let entry = entries.get(operation);
      if (!entry) entries.set(operation, (entry = { executions: 0, compiled: undefined }));
      if (entry.compiled === undefined && ++entry.executions >= onRun) {
        entry.compiled = compile(args.schema, operation);
        if (entry.compiled) {
          kept.set(entry, compiledBytes(operation));
          if (!kept.has(entry)) entry.compiled = null;
        }
      }
      const run = compiledOf(operation);
      // Variables that do not coerce: the standard executor refuses them.
      if (!run || planned.selection === null) return;
      setExecuteFn((execution) => run(execution.contextValue as object, execution.variableValues));
    },
  };
}
