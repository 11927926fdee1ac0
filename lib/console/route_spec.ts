/**
 * What one REST route of the console's API is: its path, the zod schemas of
 * what it takes, its OpenAPI responses and its handler, and the helpers the
 * route tables declare routes with. Apart from `api.ts` (the routes) so that
 * `openapi.ts`, which `api.ts` uses, can name it.
 *
 * @module
 */

import { z } from "zod";

/** What a route's handler gets: path parameters, and its query and body parsed by its schemas. */
export interface RouteInput<Q, B> {
  request: Request;
  params: Record<string, string>;
  query: Q;
  body: B;
}

/** One REST route: what it takes (zod), what it answers (OpenAPI), and what it does. */
export interface RouteSpec<Q = unknown, B = unknown> {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** OpenAPI path template, e.g. `/api/topics/{id}/messages`. */
  path: string;
  summary: string;
  /** Query parameters; values are read from the URL and typed by the schema. */
  query?: z.ZodType<Q>;
  /** Query parameters also read under another name (`q` for `query`). */
  aliases?: Readonly<Record<string, string>>;
  /** JSON body (`application/json`); a POST without a body reads as `{}`. */
  body?: z.ZodType<B>;
  /** OpenAPI responses (status → object). */
  responses: Record<string, unknown>;
  handle(input: RouteInput<Q, B>): Promise<Response> | Response;
}

/** A typed route (the handler sees its own schemas' outputs). */
export function route<Q = undefined, B = undefined>(spec: RouteSpec<Q, B>): RouteSpec<Q, B> {
  return spec;
}

/**
 * An answer described by a zod schema: the OpenAPI document shows it as
 * JSON Schema, and an API built to check its answers (the tests') validates
 * every JSON answer of the route with that status against it.
 */
export function answer(description: string, schema: z.ZodType) {
  return { description, content: { "application/json": { schema } } };
}

/** The zod schema of a route's answer with `status`, when it declares one ({@linkcode answer}). */
export function answerSchema(spec: RouteSpec, status: number): z.ZodType | undefined {
  const response = spec.responses[String(status)] as
    | { content?: Record<string, { schema?: unknown }> }
    | undefined;
  const schema = response?.content?.["application/json"]?.schema;
  return schema instanceof z.ZodType ? schema : undefined;
}

/** An OpenAPI response: JSON described by the named component schema. */
export function ok(description: string, schema: string) {
  return {
    description,
    content: { "application/json": { schema: { $ref: `#/components/schemas/${schema}` } } },
  };
}
