// The plan of an operation: what the steps after validation need to know of it, worked out once. What
// depends only on the document is kept with the parsed document (yoga hands every repeated request the
// same one); what depends on the variables is made once per request, and kept with the operation when it
// declares none. graphql/plugins/use-plan.ts makes it; nothing else walks a document or coerces variables.
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

export interface DocumentPlan {
  readonly document: DocumentNode;
  /** Prototype-free: a fragment may be called `constructor`. */
  readonly fragments: Readonly<Record<string, FragmentDefinitionNode>>;
  /** It holds @skip or @include: what runs depends on the variables. */
  readonly conditional: boolean;
  /** It holds @defer or @stream. */
  readonly incremental: boolean;
  readonly fieldCount: number;
  readonly operations: readonly OperationPlan[];
}

export interface OperationPlan {
  readonly document: DocumentPlan;
  readonly definition: OperationDefinitionNode;
  readonly name: string | undefined;
  readonly type: OperationTypeNode;
  /** Of an operation that declares no variables: the same at every request. */
  fixed?: Selection;
  /** When it does not depend on the variables (no @skip/@include). */
  measured?: DocumentNode;
  /** Of an operation that declares no variables, on the day (and in the time zone) it was counted. */
  fixedCost?: { day: string; cost: number };
}

export interface RequestPlan {
  readonly schema: GraphQLSchema;
  readonly operation: OperationPlan;
  /** null: the variables do not coerce, and execution refuses them itself before any resolver runs. */
  readonly selection: Selection | null;
  /** The most upstream calls the operation can make; null with bad variables. */
  cost(): number | null;
}

/** A field the operation selects once @skip and @include are applied, with its arguments. */
export interface SelectedField {
  readonly node: FieldNode;
  /** Alias or name. */
  readonly key: string;
  readonly parent: GraphQLCompositeType;
  /** undefined for `__typename` and introspection's fields: nothing to check or start. */
  readonly field: GraphQLField<unknown, unknown> | undefined;
  /** As resolvers get them; undefined when they do not coerce. */
  readonly args: Readonly<Record<string, unknown>> | undefined;
  /** When it has fields of its own to select. */
  readonly type: GraphQLCompositeType | undefined;
}

interface SpreadFragment {
  readonly fragment: string;
  readonly type: GraphQLCompositeType;
  readonly selectionSet: SelectionSetNode;
}

type Item = SelectedField | SpreadFragment;

export interface Refusal {
  problem: Problem;
  /** Response keys from the root (no list indices): where it would be in `data`. */
  fieldPath: string[];
  field: FieldNode;
  /** As written, when it is (a missing `to` is not). */
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
 * Fields the document selects with every fragment spread expanded, over all its operations (@skip/@include
 * ignored: an upper bound), each fragment counted once: thirty fragments that each spread the next twice
 * are under 2 KB and count 2^30. A cycle (validation refuses it) or an unknown fragment counts 0.
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

/** Made the first time it is asked for (yoga hands repeated requests the same parsed document). */
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

/** As graphql's getOperationAST: null when none. */
export function operationPlan(document: DocumentNode, operationName: string | null | undefined): OperationPlan | null {
  const { operations } = documentPlan(document);
  if (operationName === null || operationName === undefined) return operations.length === 1 ? (operations[0] ?? null) : null;
  return operations.find((operation) => operation.name === operationName) ?? null;
}

const NO_VARIABLES: Variables = Object.freeze({});

/** What the coerced variables leave selected, made as the steps ask for it. */
export class Selection {
  private readonly items = new Map<SelectionSetNode, Item[]>();
  private refused: Refusal[] | undefined;
  private measuredDocument: DocumentNode | undefined;

  constructor(
    readonly schema: GraphQLSchema,
    readonly operation: OperationPlan,
    readonly variables: Variables,
  ) {}

  get fragments(): Readonly<Record<string, FragmentDefinitionNode>> {
    return this.operation.document.fragments;
  }

  /** In document order, from the checks each field declares (`argumentProblems`: validate.ts). */
  refusals(): Refusal[] {
    if (this.refused !== undefined) return this.refused;
    const refusals: Refusal[] = [];
    const mutationType = this.schema.getMutationType();
    const walked = new Set<string>();
    const walk = (items: Item[], path: string[]): void =>
      this.eachField(items, walked, ({ field, node, args, key, parent, type }) => {
        if (field === undefined) return;
        const fieldPath = [...path, key];
        const check = field.extensions.argumentProblems;
        for (const problem of check && args ? check(args) : []) {
          const argument = node.arguments?.find((written) => written.name.value === problem.field[0]);
          refusals.push({ problem, fieldPath, field: node, argument, write: parent === mutationType });
        }
        if (node.selectionSet && type) walk(this.itemsOf(node.selectionSet, type), fieldPath);
      });
    const root = this.schema.getRootType(this.operation.type);
    if (root) walk(this.itemsOf(this.operation.definition.selectionSet, root), []);
    this.refused = refusals;
    return refusals;
  }

  /** The fields right under these nodes (of type `type`), through fragments. */
  fieldsUnder(nodes: readonly FieldNode[], type: GraphQLCompositeType): SelectedField[] {
    const fields: SelectedField[] = [];
    const walked = new Set<string>();
    for (const node of nodes)
      if (node.selectionSet) this.eachField(this.itemsOf(node.selectionSet, type), walked, (field) => fields.push(field));
    return fields;
  }

  /** Each fragment walked once, where it is first spread: its arguments are the same wherever it is spread. */
  private eachField(items: Item[], walked: Set<string>, onField: (field: SelectedField) => void): void {
    for (const item of items) {
      if (!('fragment' in item)) onField(item);
      else if (!walked.has(item.fragment)) {
        walked.add(item.fragment);
        this.eachField(this.itemsOf(item.selectionSet, item.type), walked, onField);
      }
    }
  }

  /** The operation and its fragments without introspection, `__typename` and what @skip/@include leave out. */
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

/** Where a request's plan is kept: the context resolvers get. */
export interface Planned {
  /** null when the document holds no such operation; unset until made. */
  plan?: RequestPlan | null;
}

/** Kept in `context`, with which field costs are counted (a period's length depends on its "now"). */
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

/** undefined when none was made, null when it has no operation. */
export function planOf(context: Planned): RequestPlan | null | undefined {
  return context.plan;
}
