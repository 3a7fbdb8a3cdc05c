// A tool's input schema, made from its operation's variables, in the plainest JSON Schema every MCP client
// reads: one flat object, input objects inlined, no $ref, anyOf or type arrays (optional: left out of
// `required`), no other properties, enums with their values. An argument's description is the variable's
// own, else that of the schema's argument it is given to, then its type's. A call's arguments are checked
// by graphql-js's own coercion of variables, before anything runs.
import {
  type ArgumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  getNamedType,
  getVariableValues,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type OperationDefinitionNode,
  typeFromAST,
  valueFromAST,
  visit,
  visitWithTypeInfo,
  TypeInfo,
} from 'graphql';

export interface JsonSchema {
  type: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  format?: 'date' | 'date-time';
  enum?: string[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: false;
  default?: unknown;
}

export interface ObjectSchema extends JsonSchema {
  type: 'object';
  properties: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties: false;
}

/** A custom scalar unknown here is a string. */
const SCALARS: Record<string, JsonSchema> = {
  Int: { type: 'integer' },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
  String: { type: 'string' },
  ID: { type: 'string' },
  Date: { type: 'string', format: 'date' },
  DateTime: { type: 'string', format: 'date-time' },
};

export function inputSchemaOf(schema: GraphQLSchema, operation: OperationDefinitionNode): ObjectSchema {
  const argumentDescriptions = argumentDescriptionsOf(schema, operation);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (type === undefined) throw new Error(`MCP operations: $${name} has a type the schema does not have`);
    const own = definition.description?.value ?? argumentDescriptions.get(name);
    const property = schemaOf(type, own, new Set());
    if (definition.defaultValue !== undefined) property.default = valueFromAST(definition.defaultValue, type);
    else if (isNonNullType(type)) required.push(name);
    properties[name] = property;
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

function schemaOf(type: GraphQLInputType, description: string | undefined, inlining: Set<string>): JsonSchema {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) {
    return { type: 'array', ...(description ? { description } : {}), items: schemaOf(inner.ofType, undefined, inlining) };
  }
  const named = getNamedType(inner);
  const described = (typeDescription: string | null | undefined): { description?: string } => {
    const text = [description, typeDescription].filter((part): part is string => typeof part === 'string' && part !== '').join(' ');
    return text === '' ? {} : { description: text };
  };
  if (isEnumType(named)) {
    const values = named.getValues();
    // The values' meanings, when the schema gives them: a model picks a value by what it means.
    const meanings = values.every((value) => value.description)
      ? values.map((value) => `${value.name}: ${value.description}`).join(' ')
      : '';
    return {
      type: 'string',
      enum: values.map((value) => value.name),
      ...described([named.description, meanings].filter(Boolean).join(' ')),
    };
  }
  if (isInputObjectType(named)) {
    if (inlining.has(named.name)) throw new Error(`MCP operations: the input ${named.name} contains itself and cannot be inlined`);
    const within = new Set(inlining).add(named.name);
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const field of Object.values(named.getFields())) {
      properties[field.name] = schemaOf(field.type, field.description ?? undefined, within);
      if (isNonNullType(field.type) && field.defaultValue === undefined) required.push(field.name);
    }
    return {
      type: 'object',
      ...described(named.description),
      properties,
      ...(required.length > 0 ? { required } : {}),
      additionalProperties: false,
    };
  }
  if (isScalarType(named)) {
    const known = SCALARS[named.name];
    // Built-in scalars need no words of their own; the gateway's (Date, DateTime) say their form.
    const typeDescription = known === undefined || known.format !== undefined ? named.description : undefined;
    return { ...(known ?? { type: 'string' }), ...described(typeDescription) };
  }
  throw new Error(`MCP operations: ${String(named)} cannot be an input`);
}

/** For each variable given straight to an argument, that argument's description. */
function argumentDescriptionsOf(schema: GraphQLSchema, operation: OperationDefinitionNode): Map<string, string> {
  const found = new Map<string, string>();
  const typeInfo = new TypeInfo(schema);
  visit(
    operation,
    visitWithTypeInfo(typeInfo, {
      Argument(node: ArgumentNode) {
        const description = typeInfo.getArgument()?.description;
        if (node.value.kind === 'Variable' && description && !found.has(node.value.name.value))
          found.set(node.value.name.value, description);
      },
    }),
  );
  return found;
}

export function argumentProblems(schema: GraphQLSchema, operation: OperationDefinitionNode, args: Record<string, unknown>): string[] {
  const declared = new Set((operation.variableDefinitions ?? []).map((definition) => definition.variable.name.value));
  const unknown = Object.keys(args)
    .filter((name) => !declared.has(name))
    .map((name) => `Unknown argument "${name}": the arguments are ${[...declared].join(', ') || 'none'}.`);
  if (unknown.length > 0) return unknown;
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], args, { maxErrors: 10 });
  // graphql-js names a variable `$name`: the tool's argument has the same name without the dollar.
  return 'errors' in coerced && coerced.errors
    ? coerced.errors.map((error) => error.message.replace(/Variable "\$(\w+)"/g, 'Argument "$1"'))
    : [];
}
