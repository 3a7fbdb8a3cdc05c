// Tools made of operations: their names, their input schemas in the flat form every client reads (no
// $ref, $defs, anyOf, oneOf, allOf or type arrays; objects closed; enums with values; dates with a
// format), and every way an operation cannot be a tool, refused at start with its file named.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_OPERATIONS, loadOperations, operationsOf } from '../../src/mcp/operations.js';
import type { JsonSchema } from '../../src/mcp/input-schema.js';
import { toolNameOf, toolsOf } from '../../src/mcp/tools.js';
import { schema } from '../../src/schema/index.js';

/** Every rule of the flat form a schema breaks, with where. */
function flatProblems(node: JsonSchema, at: string): string[] {
  const problems: string[] = [];
  const raw = node as unknown as Record<string, unknown>;
  for (const word of ['$ref', '$defs', 'definitions', 'anyOf', 'oneOf', 'allOf']) if (word in raw) problems.push(`${at}: ${word}`);
  if (Array.isArray(raw.type)) problems.push(`${at}: a type array`);
  if (node.type === 'object' && node.additionalProperties !== false) problems.push(`${at}: an open object`);
  if (node.type === 'string' && node.enum !== undefined && node.enum.length === 0) problems.push(`${at}: an enum without values`);
  for (const [name, property] of Object.entries(node.properties ?? {})) problems.push(...flatProblems(property, `${at}.${name}`));
  if (node.items) problems.push(...flatProblems(node.items, `${at}[]`));
  return problems;
}

const operationsIn = (files: Record<string, string>): string => {
  const folder = mkdtempSync(join(tmpdir(), 'mcp-operations-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
  return folder;
};

describe('MCP tools', () => {
  it('names a tool after its operation in snake_case, within what clients accept', () => {
    expect(['WebsiteSummary', 'getHTTPStatus', 'ListWebsites2', 'top_values'].map(toolNameOf)).toEqual([
      'website_summary',
      'get_http_status',
      'list_websites2',
      'top_values',
    ]);
  });

  it('gives every built-in tool a flat, closed input schema with described arguments', () => {
    const tools = toolsOf(schema, loadOperations(schema, [BUILT_IN_OPERATIONS]), { mutations: true });
    expect(tools.length).toBeGreaterThanOrEqual(7);
    for (const tool of tools) {
      expect(flatProblems(tool.inputSchema, tool.name)).toEqual([]);
      for (const [name, property] of Object.entries(tool.inputSchema.properties))
        expect(property.description, `${tool.name}.${name}`).toBeTruthy();
    }
    const top = tools.find((tool) => tool.name === 'top_values');
    expect(top?.inputSchema.properties.from).toMatchObject({ type: 'string', format: 'date' });
    expect(top?.inputSchema.properties.statistic?.enum).toContain('REFERRER');
    expect(top?.inputSchema.properties.perPage).toMatchObject({ type: 'integer', default: 10 });
    expect(top?.inputSchema.required).toEqual(['websiteId', 'statistic']);
  });

  it('offers a mutation only when turned on, marked destructive', () => {
    const operations = loadOperations(schema, [BUILT_IN_OPERATIONS]);
    expect(toolsOf(schema, operations, { mutations: false }).map((tool) => tool.name)).not.toContain('set_favorite');
    const favorite = toolsOf(schema, operations, { mutations: true }).find((tool) => tool.name === 'set_favorite');
    expect(favorite?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });

  it("describes a variable without a description string by the schema's argument it is given to", () => {
    const document = `"""One site."""
query Site($site: ID!, $days: Period) { website(id: $site) { summary(period: $days) { current { visitors } } } }`;
    const [operation] = operationsOf(schema, 'site.graphql', document);
    if (operation === undefined) throw new Error('no operation');
    const [tool] = toolsOf(schema, [operation], { mutations: false });
    expect(tool?.inputSchema.properties.site?.description).toBe("The website's id.");
    expect(tool?.inputSchema.properties.days?.description).toMatch(/^A range relative to today, instead of `from` and `to`\. A date range/);
    expect(tool?.inputSchema.properties.days?.description).toContain('LAST_MONTH: The whole previous calendar month.');
  });

  it('inlines an input object, its enums with their values', () => {
    const [create] = operationsOf(
      schema,
      'create.graphql',
      '"""Adds a website."""\nmutation CreateSite($input: CreateWebsiteInput!) { createWebsite(input: $input) { website { id } } }',
    );
    if (create === undefined) throw new Error('no operation');
    const [tool] = toolsOf(schema, [create], { mutations: true });
    const input = tool?.inputSchema.properties.input;
    expect(input).toMatchObject({ type: 'object', additionalProperties: false, required: ['domain'] });
    expect(input?.properties?.privacy).toMatchObject({ type: 'string', enum: ['PASSWORD', 'PRIVATE', 'PUBLIC'] });
    expect(input?.properties?.excludeIps).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(flatProblems(tool?.inputSchema ?? { type: 'object' }, 'create')).toEqual([]);
  });

  it("adds the operator's folder, and refuses at start what cannot be a tool, naming the file", () => {
    const own = operationsIn({ 'domains.graphql': '"""Domains only."""\nquery Domains { websites { nodes { domain } } }' });
    const names = toolsOf(schema, loadOperations(schema, [BUILT_IN_OPERATIONS, own]), { mutations: false }).map((tool) => tool.name);
    expect(names).toContain('domains');
    const refusals: [Record<string, string>, RegExp][] = [
      [{ 'bad.graphql': 'query Broken { websites { ' }, /bad\.graphql does not parse/],
      [{ 'wrong.graphql': '"""x"""\nquery Wrong { websites { nope } }' }, /wrong\.graphql is not valid: Cannot query field "nope"/],
      [{ 'anon.graphql': '{ websites { totalCount } }' }, /anon\.graphql has an operation without a name/],
      [{ 'bare.graphql': 'query Bare { websites { totalCount } }' }, /bare\.graphql: Bare has no description string/],
      [
        { 'again.graphql': '"""x"""\nquery GetWebsite { websites { totalCount } }' },
        /GetWebsite is named in both .*get-website\.graphql and .*again\.graphql/,
      ],
      [
        {
          'a.graphql': '"""x"""\nquery siteList { websites { totalCount } }',
          'b.graphql': '"""y"""\nquery SiteList { websites { totalCount } }',
        },
        /siteList \(.*a\.graphql\) and SiteList \(.*b\.graphql\) are both the tool site_list/,
      ],
    ];
    for (const [files, said] of refusals) {
      expect(() => toolsOf(schema, loadOperations(schema, [BUILT_IN_OPERATIONS, operationsIn(files)]), { mutations: false })).toThrow(said);
    }
  });
});
