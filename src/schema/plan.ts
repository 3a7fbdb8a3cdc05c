// The plan of an operation: what the steps after parsing and validation need to know about it, worked
// out once. What depends only on the document (its fragments, whether it holds @skip/@include or
// @defer/@stream, its size with fragments expanded, its operations) is kept with the parsed document,
// which yoga hands to every repeated request. What depends on the variables (their coerced values, the
// fields they leave selected with their arguments, the refused arguments) is made once per request, and
// kept with the operation when it declares no variables (its cost too, for its day).
// graphql/plugins/use-plan.ts makes it for each execution; the limits, the argument checks, the selection
// order, the compiled execution, the look-ahead of statistics, the metrics and the request log read it.
// Nothing else walks a document or coerces variables.
import { complexityFromQuery } from '@pothos/plugin-complexity';
import {
  BREAK,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  getVariableValues,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  typeFromAST,
  visit,
  type ArgumentNode,
  type ASTVisitor,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type OperationTypeNode,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import { dayIn, type Clock } from '../analytics/calendar.js';
import type { Problem } from './validate.js';

type Variables = Readonly<Record<string, unknown>>;

/** What a parsed document is, whichever of its operations runs. */
export interface DocumentPlan {
  readonly document: DocumentNode;
  /** Its fragments by name (prototype-free: a fragment may be called `constructor`). */
  readonly fragments: Readonly<Record<string, FragmentDefinitionNode>>;
  /** Whether it holds @skip or @include: then what runs depends on the variables. */
  readonly conditional: boolean;
  /** Whether it holds @defer or @stream. */
  readonly incremental: boolean;
  /** Fields it selects with every fragment spread expanded, over all its operations (expandedFieldCount). */
  readonly fieldCount: number;
  readonly operations: readonly OperationPlan[];
}

/** One operation of a document. */
export interface OperationPlan {
  readonly document: DocumentPlan;
  readonly definition: OperationDefinitionNode;
  readonly name: string | undefined;
  readonly type: OperationTypeNode;
  /** The selection of an operation that declares no variables: the same at every request, made at its first. */
  fixed?: Selection;
  /** Without what costs nothing or will not run, when that does not depend on the variables (no @skip/@include). */
  measured?: DocumentNode;
  /** The cost of an operation that declares no variables, on the day (and in the time zone) it was counted. */
  fixedCost?: { day: string; cost: number };
}

/** One request's plan: its operation, and what the variables leave selected (null when they do not coerce). */
export interface RequestPlan {
  readonly schema: GraphQLSchema;
  readonly operation: OperationPlan;
  /** null: the variables do not coerce, and execution refuses them itself before any resolver runs. */
  readonly selection: Selection | null;
  /** The most upstream calls the operation can make (deduplication may make it fewer); null with bad variables. */
  cost(): number | null;
}

/** A field the operation selects once @skip and @include are applied, with its arguments. */
export interface SelectedField {
  readonly node: FieldNode;
  /** Its response key (alias or name). */
  readonly key: string;
  readonly parent: GraphQLCompositeType;
  /** undefined for `__typename` and introspection's fields: they have nothing to check or start. */
  readonly field: GraphQLField<unknown, unknown> | undefined;
  /** As resolvers get them (variables coerced, defaults applied); undefined when they do not coerce. */
  readonly args: Readonly<Record<string, unknown>> | undefined;
  /** Its named type when that has fields of its own to select. */
  readonly type: GraphQLCompositeType | undefined;
}

/** A named fragment spread (and included) in a selection: walked through, once per walk. */
interface SpreadFragment {
  readonly fragment: string;
  readonly type: GraphQLCompositeType;
  readonly selectionSet: SelectionSetNode;
}

type Item = SelectedField | SpreadFragment;

/** One refused argument of one field of the operation. */
export interface Refusal {
  problem: Problem;
  /** Response keys from the root to the field (aliases, no list indices): where it would be in `data`. */
  fieldPath: string[];
  field: FieldNode;
  /** The argument at fault as written, when it is (a missing `to` is not). */
  argument: ArgumentNode | undefined;
  /** A mutation's own argument: answered in its payload's userErrors. */
  write: boolean;
}

function isIncluded(node: SelectionNode, variables: Variables): boolean {
  return (
    getDirectiveValues(GraphQLSkipDirective, node, variables)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false
  );
}

/** Whether any of these directives appears anywhere in the document. */
function usesDirective(document: DocumentNode, names: readonly string[]): boolean {
  let found = false;
  visit(document, {
    Directive(node) {
      if (!names.includes(node.name.value)) return undefined;
      found = true;
      return BREAK;
    },
  });
  return found;
}

/**
 * Fields the document selects with every fragment spread expanded, over all its operations (each field
 * counted once per place it would appear; @skip/@include ignored: an upper bound). Each fragment is
 * counted once; a spread of a fragment being counted (a cycle, which validation refuses) or of an
 * unknown one counts 0. Thirty fragments that each spread the next twice are under 2 KB and count 2^30.
 */
export function expandedFieldCount(document: DocumentNode, fragments = fragmentsOf(document)): number {
  const counted = new Map<string, number>();
  const counting = new Set<string>();

  const fragmentCount = (name: string): number => {
    const known = counted.get(name);
    if (known !== undefined) return known;
    const fragment = fragments[name];
    if (fragment === undefined || counting.has(name)) return 0;
    counting.add(name);
    const count = selectionCount(fragment.selectionSet);
    counting.delete(name);
    counted.set(name, count);
    return count;
  };

  function selectionCount(selectionSet: SelectionSetNode): number {
    let count = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) count += 1 + (selection.selectionSet ? selectionCount(selection.selectionSet) : 0);
      else if (selection.kind === Kind.INLINE_FRAGMENT) count += selectionCount(selection.selectionSet);
      else count += fragmentCount(selection.name.value);
    }
    return count;
  }

  let total = 0;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) total += selectionCount(definition.selectionSet);
  }
  return total;
}

function fragmentsOf(document: DocumentNode): Record<string, FragmentDefinitionNode> {
  const fragments = Object.create(null) as Record<string, FragmentDefinitionNode>;
  for (const definition of document.definitions) {
    // The first of two with one name, as graphql's executor (validation refuses the second).
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] ??= definition;
  }
  return fragments;
}

const documentPlans = new WeakMap<DocumentNode, DocumentPlan>();

/** The document's plan, made the first time it is asked for (yoga hands repeated requests the same parsed document). */
export function documentPlan(document: DocumentNode): DocumentPlan {
  let plan = documentPlans.get(document);
  if (plan !== undefined) return plan;
  const fragments = fragmentsOf(document);
  const operations: OperationPlan[] = [];
  plan = {
    document,
    fragments,
    conditional: usesDirective(document, ['skip', 'include']),
    incremental: usesDirective(document, ['defer', 'stream']),
    fieldCount: expandedFieldCount(document, fragments),
    operations,
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) {
      operations.push({ document: plan, definition, name: definition.name?.value, type: definition.operation });
    }
  }
  documentPlans.set(document, plan);
  return plan;
}

/** The operation `operationName` picks (or the only one when it is absent), as graphql's getOperationAST; null when none. */
export function operationPlan(document: DocumentNode, operationName: string | null | undefined): OperationPlan | null {
  const { operations } = documentPlan(document);
  if (operationName === null || operationName === undefined) return operations.length === 1 ? (operations[0] ?? null) : null;
  return operations.find((operation) => operation.name === operationName) ?? null;
}

const NO_VARIABLES: Variables = Object.freeze({});

/** What the coerced variables leave selected, made as the steps ask for it and kept for the request. */
export class Selection {
  private readonly items = new Map<SelectionSetNode, Item[]>();
  private refused: Refusal[] | undefined;
  private measuredDocument: DocumentNode | undefined;

  constructor(
    readonly schema: GraphQLSchema,
    readonly operation: OperationPlan,
    /** Coerced, as execution gives them to resolvers. */
    readonly variables: Variables,
  ) {}

  get fragments(): Readonly<Record<string, FragmentDefinitionNode>> {
    return this.operation.document.fragments;
  }

  /**
   * Every refused argument of the operation, in document order, from the checks each field declares
   * where it is defined (`argumentProblems` in its extensions: validate.ts). Each fragment is walked
   * once, where it is first spread (and included): its arguments are the same wherever it is spread.
   */
  refusals(): Refusal[] {
    if (this.refused !== undefined) return this.refused;
    const refusals: Refusal[] = [];
    const mutationType = this.schema.getMutationType();
    const walked = new Set<string>();
    const walk = (items: Item[], path: string[]): void => {
      for (const item of items) {
        if ('fragment' in item) {
          if (walked.has(item.fragment)) continue;
          walked.add(item.fragment);
          walk(this.itemsOf(item.selectionSet, item.type), path);
          continue;
        }
        const { field, node, args } = item;
        if (field === undefined) continue;
        const fieldPath = [...path, item.key];
        const check = field.extensions.argumentProblems;
        for (const problem of check && args ? check(args) : []) {
          const argument = node.arguments?.find((written) => written.name.value === problem.field[0]);
          refusals.push({ problem, fieldPath, field: node, argument, write: item.parent === mutationType });
        }
        if (node.selectionSet && item.type) walk(this.itemsOf(node.selectionSet, item.type), fieldPath);
      }
    };
    const root = this.schema.getRootType(this.operation.type);
    if (root) walk(this.itemsOf(this.operation.definition.selectionSet, root), []);
    this.refused = refusals;
    return refusals;
  }

  /** The fields right under these nodes (of type `type`), through fragments: each fragment once. */
  fieldsUnder(nodes: readonly FieldNode[], type: GraphQLCompositeType): SelectedField[] {
    const fields: SelectedField[] = [];
    const walked = new Set<string>();
    const walk = (items: Item[]): void => {
      for (const item of items) {
        if (!('fragment' in item)) fields.push(item);
        else if (!walked.has(item.fragment)) {
          walked.add(item.fragment);
          walk(this.itemsOf(item.selectionSet, item.type));
        }
      }
    };
    for (const node of nodes) if (node.selectionSet) walk(this.itemsOf(node.selectionSet, type));
    return fields;
  }

  /**
   * The operation alone with its fragments, without what costs nothing by definition or will not run:
   * introspection and `__typename` (clients add it everywhere), and what @skip/@include leave out.
   * Kept with the operation when the document has neither (pruning is most of the count's work).
   */
  measured(): DocumentNode {
    const { operation } = this;
    if (!operation.document.conditional) return (operation.measured ??= this.prune());
    return (this.measuredDocument ??= this.prune());
  }

  private prune(): DocumentNode {
    const { variables } = this;
    const prune: ASTVisitor = {
      Field: (node) => (node.name.value.startsWith('__') || !isIncluded(node, variables) ? null : undefined),
      FragmentSpread: (node) => (isIncluded(node, variables) ? undefined : null),
      InlineFragment: (node) => (isIncluded(node, variables) ? undefined : null),
    };
    const definitions = [this.operation.definition, ...Object.values(this.fragments)];
    return visit({ kind: Kind.DOCUMENT, definitions }, prune);
  }

  /** A selection set's included fields and fragment spreads, inline fragments opened in place. */
  private itemsOf(selectionSet: SelectionSetNode, parent: GraphQLCompositeType): Item[] {
    let items = this.items.get(selectionSet);
    if (items !== undefined) return items;
    const found: Item[] = [];
    const add = (set: SelectionSetNode, type: GraphQLCompositeType): void => {
      for (const node of set.selections) {
        if (!isIncluded(node, this.variables)) continue;
        if (node.kind === Kind.FIELD) {
          found.push(this.selected(node, type));
        } else if (node.kind === Kind.INLINE_FRAGMENT) {
          const inner = node.typeCondition ? typeFromAST(this.schema, node.typeCondition) : type;
          if (isCompositeType(inner)) add(node.selectionSet, inner);
        } else {
          const fragment = this.fragments[node.name.value];
          const inner = fragment ? typeFromAST(this.schema, fragment.typeCondition) : undefined;
          if (fragment && isCompositeType(inner))
            found.push({ fragment: node.name.value, type: inner, selectionSet: fragment.selectionSet });
        }
      }
    };
    add(selectionSet, parent);
    items = found;
    this.items.set(selectionSet, items);
    return items;
  }

  private selected(node: FieldNode, parent: GraphQLCompositeType): SelectedField {
    const key = (node.alias ?? node.name).value;
    // __typename and introspection fields are not in getFields().
    const field = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[node.name.value] : undefined;
    if (field === undefined) return { node, key, parent, field, args: NO_VARIABLES, type: undefined };
    let args: Record<string, unknown> | undefined = NO_VARIABLES;
    if (field.args.length > 0) {
      try {
        args = getArgumentValues(field, node, this.variables);
      } catch {
        args = undefined; // not a value of the argument's type: execution refuses it itself
      }
    }
    const named = getNamedType(field.type);
    return { node, key, parent, field, args, type: isCompositeType(named) ? named : undefined };
  }
}

/** Where a request's plan is kept: its execution's context (yoga's context value, which resolvers get). */
export interface Planned {
  /** The plan planRequest made: null when the document holds no such operation; unset until made. */
  plan?: RequestPlan | null;
}

/**
 * The plan of the request whose context is `context`, kept in it for planOf(context): null when the
 * document holds no such operation (use-operation-name.ts answers it before execution). `context` is also
 * what field costs are counted with (a period's length depends on its "now": graphql/context.ts).
 */
export function planRequest(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Readonly<Record<string, unknown>> | null | undefined,
  context: Planned,
): RequestPlan | null {
  const operation = operationPlan(document, operationName);
  if (operation === null) {
    context.plan = null;
    return null;
  }
  const definitions = operation.definition.variableDefinitions ?? [];
  let selection: Selection | null;
  if (definitions.length === 0) {
    selection = operation.fixed ??= new Selection(schema, operation, NO_VARIABLES);
  } else {
    const coerced = getVariableValues(schema, definitions, rawVariables ?? {});
    selection = coerced.coerced ? new Selection(schema, operation, coerced.coerced) : null;
  }
  let cost: number | null | undefined;
  const plan: RequestPlan = {
    schema,
    operation,
    selection,
    cost: () => {
      if (cost !== undefined) return cost;
      if (selection === null) return (cost = null);
      // Without variables, only the day of the context's clock can change the cost (a period's length).
      const clock = definitions.length === 0 ? (context as { clock?: Clock }).clock : undefined;
      const day = clock === undefined ? undefined : `${clock.timeZone} ${dayIn(clock.timeZone, clock.now())}`;
      if (day !== undefined && operation.fixedCost?.day === day) return (cost = operation.fixedCost.cost);
      const variables = rawVariables ?? {};
      cost = complexityFromQuery(selection.measured(), { schema, ctx: context, variables }).complexity;
      if (day !== undefined) operation.fixedCost = { day, cost };
      return cost;
    },
  };
  context.plan = plan;
  return plan;
}

/** The plan planRequest made for this context: undefined when none was made, null when it has no operation. */
export function planOf(context: Planned): RequestPlan | null | undefined {
  return context.plan;
}
