// Puts every object of an answer in selection order, as the spec asks. yoga's executor adds a field
// whose resolver returns a promise when it settles (graphql-yoga#3256, pothos#1511); graphql-jit misplaces
// a field that @skip/@include leave out. So this re-orders the standard executor's answers, and a compiled
// one only when its document has @skip or @include, by graphql-tools' collectFields. An object already
// in order is kept as it is: an answer in order costs one walk.
import { collectFields, collectSubFields, type FieldsAndPatches } from '@graphql-tools/utils';
import {
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  getNamedType,
  isAbstractType,
  isObjectType,
  type ExecutionResult,
  type FieldNode,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Planned, Selection } from '../../schema/plan.js';
import type { PlanStep } from './use-plan.js';

type Fields = FieldsAndPatches['fields'];

type ResultObject = Record<string, unknown>;

/** A @defer/@stream part's entry: an object's deferred fields, or a list's next items. */
interface IncrementalEntry {
  data?: ResultObject | null;
  items?: unknown[] | null;
  path?: readonly (string | number)[];
}

/** An object's fields in selection order; an object type's value has its shape, made when first needed. */
type Shape = ShapeEntry[];
interface ShapeEntry {
  key: string;
  nodes: FieldNode[];
  type: GraphQLObjectType | null;
  shape: Shape | undefined;
}

const orders = new WeakMap<Selection, SelectionOrder>();

const isResultObject = (value: unknown): value is ResultObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An abstract type with one object type is that type; with several, an answer does not say which it is. */
function fieldType(schema: GraphQLSchema, parent: GraphQLObjectType, nodes: FieldNode[]): GraphQLNamedType | undefined {
  const name = nodes[0]?.name.value;
  if (name === undefined) return undefined;
  if (parent === schema.getQueryType() && name === SchemaMetaFieldDef.name) return getNamedType(SchemaMetaFieldDef.type);
  if (parent === schema.getQueryType() && name === TypeMetaFieldDef.name) return getNamedType(TypeMetaFieldDef.type);
  const field = parent.getFields()[name];
  if (field === undefined) return undefined;
  const named = getNamedType(field.type);
  if (!isAbstractType(named)) return named;
  const possible = schema.getPossibleTypes(named);
  return possible.length === 1 ? possible[0] : named;
}

class SelectionOrder {
  private root: Shape | undefined;

  private constructor(
    private readonly selection: Selection,
    private readonly rootType: GraphQLObjectType,
  ) {}

  /** null when the operation has no root type. */
  static of(selection: Selection): SelectionOrder | null {
    let order = orders.get(selection);
    if (order !== undefined) return order;
    const rootType = selection.schema.getRootType(selection.operation.type);
    if (!rootType) return null;
    order = new SelectionOrder(selection, rootType);
    orders.set(selection, order);
    return order;
  }

  result<T extends ExecutionResult>(result: T): T {
    if (!isResultObject(result.data)) return result;
    const data = this.object(result.data, this.rootShape());
    return data === result.data ? result : { ...result, data };
  }

  incrementalEntry<T extends IncrementalEntry>(entry: T): T {
    const { path } = entry;
    if (path === undefined) return entry;
    if (isResultObject(entry.data)) {
      const at = this.objectAt(path);
      if (at === null) return entry;
      // The fields of one deferred fragment there: the one that has them all.
      const keys = Object.keys(entry.data);
      const own = at.patches.find((patch) => keys.every((key) => patch.has(key))) ?? at.fields;
      const data = this.object(entry.data, this.shapeOf(at.type, own));
      return data === entry.data ? entry : { ...entry, data };
    }
    if (Array.isArray(entry.items)) {
      // Streamed items sit at the list's path plus the first item's index.
      const list = this.fieldAt(path.slice(0, -1));
      if (list === null || !isObjectType(list.type)) return entry;
      const items = this.list(entry.items, this.shapeOf(list.type, this.subFields(list.type, list.nodes).fields));
      return items === entry.items ? entry : { ...entry, items };
    }
    return entry;
  }

  private rootShape(): Shape {
    this.root ??= this.shapeOf(this.rootType, this.rootFields().fields);
    return this.root;
  }

  private shapeOf(type: GraphQLObjectType, fields: Fields): Shape {
    return Array.from(fields, ([key, nodes]) => {
      const named = fieldType(this.selection.schema, type, nodes);
      return { key, nodes, type: named !== undefined && isObjectType(named) ? named : null, shape: undefined };
    });
  }

  private rootFields(): FieldsAndPatches {
    const { schema, fragments, variables, operation } = this.selection;
    return collectFields(schema, fragments, variables, this.rootType, operation.definition.selectionSet);
  }

  private subFields(type: GraphQLObjectType, nodes: FieldNode[]): FieldsAndPatches {
    const { schema, fragments, variables } = this.selection;
    return collectSubFields(schema, fragments, variables, type, nodes);
  }

  private objectAt(path: readonly (string | number)[]): { type: GraphQLObjectType; fields: Fields; patches: Fields[] } | null {
    const field = path.length === 0 ? { type: this.rootType, nodes: null } : this.fieldAt(path);
    if (field === null || !isObjectType(field.type)) return null;
    const { fields, patches } = field.nodes === null ? this.rootFields() : this.subFields(field.type, field.nodes);
    return { type: field.type, fields, patches: patches.map((patch) => patch.fields) };
  }

  /** The field at `path` (list indexes skipped), deferred or not. */
  private fieldAt(path: readonly (string | number)[]): { type: GraphQLNamedType; nodes: FieldNode[] } | null {
    let collected = this.rootFields();
    let parent: GraphQLObjectType = this.rootType;
    let found: { type: GraphQLNamedType; nodes: FieldNode[] } | null = null;
    for (const key of path) {
      if (typeof key === 'number') continue;
      if (found !== null) {
        if (!isObjectType(found.type)) return null;
        parent = found.type;
        collected = this.subFields(parent, found.nodes);
      }
      const nodes = collected.fields.get(key) ?? collected.patches.find((patch) => patch.fields.has(key))?.fields.get(key);
      const type = nodes === undefined ? undefined : fieldType(this.selection.schema, parent, nodes);
      if (nodes === undefined || type === undefined) return null;
      found = { type, nodes };
    }
    return found;
  }

  /** `value` itself when nothing moved. */
  private object(value: ResultObject, shape: Shape): ResultObject {
    const keys = Object.keys(value);
    let inOrder = true;
    let position = 0;
    let replaced: Map<string, unknown> | undefined;
    for (const entry of shape) {
      if (!Object.hasOwn(value, entry.key)) continue;
      if (keys[position++] !== entry.key) inOrder = false;
      const child = value[entry.key];
      if (entry.type === null || typeof child !== 'object' || child === null) continue;
      entry.shape ??= this.shapeOf(entry.type, this.subFields(entry.type, entry.nodes).fields);
      const ordered = Array.isArray(child) ? this.list(child, entry.shape) : this.object(child as ResultObject, entry.shape);
      if (ordered !== child) (replaced ??= new Map()).set(entry.key, ordered);
    }
    if (inOrder && replaced === undefined) return value;
    // Prototype-free, as the executor makes them: an alias may be `__proto__`.
    const ordered = Object.create(null) as ResultObject;
    for (const { key } of shape) if (Object.hasOwn(value, key)) ordered[key] = replaced?.has(key) ? replaced.get(key) : value[key];
    for (const key of keys) if (!Object.hasOwn(ordered, key)) ordered[key] = value[key];
    return ordered;
  }

  private list(items: unknown[], shape: Shape): unknown[] {
    let ordered: unknown[] | undefined;
    for (const [index, item] of items.entries()) {
      if (typeof item !== 'object' || item === null) continue;
      const orderedItem = Array.isArray(item) ? this.list(item, shape) : this.object(item as ResultObject, shape);
      if (orderedItem !== item) (ordered ??= items.slice())[index] = orderedItem;
    }
    return ordered ?? items;
  }
}

export function useSelectionOrder(plan: PlanStep): Plugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      let standard = false;
      setExecuteFn((execution) => {
        standard = true;
        return executeFn(execution);
      });
      return {
        onExecuteDone({ result, setResult }) {
          const { selection } = plan.of(args.contextValue as Planned) ?? {};
          if (!selection || (!standard && !selection.operation.document.conditional)) return undefined;
          const order = SelectionOrder.of(selection);
          if (order === null) return undefined;
          if (!(Symbol.asyncIterator in result)) {
            setResult(order.result(result));
            return undefined;
          }
          let first = true;
          return {
            onNext({ result: part, setResult: setPart }) {
              if (first) {
                first = false;
                setPart(order.result(part));
                return;
              }
              // envelop types every part as an ExecutionResult; later ones are `{ incremental, hasNext }`.
              const { incremental } = part as { incremental?: unknown };
              if (!Array.isArray(incremental)) return;
              const ordered = incremental.map((entry: IncrementalEntry) => order.incrementalEntry(entry));
              if (ordered.some((entry, index) => entry !== incremental[index])) setPart({ ...part, incremental: ordered } as typeof part);
            },
          };
        },
      };
    },
  };
}
