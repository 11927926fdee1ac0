/**
 * AgentChatBus's template routes: `/api/templates` (list, create) and one
 * template (get, delete).
 *
 * @module
 */

import { z } from "zod";
import { templateCreateInput, templateSchema } from "../../bus/chat/schemas.ts";
import {
  requireTemplate,
  templateCreate,
  templateDelete,
  templateList,
} from "../../bus/chat/threads.ts";
import type { Bus } from "../../bus/mod.ts";
import { json } from "../../http_respond.ts";
import { answer, route, type RouteSpec } from "../route_spec.ts";

/** A template as `GET /api/templates` lists it: without its prompt and metadata. */
const listedTemplateSchema = templateSchema.pick({
  id: true,
  name: true,
  description: true,
  is_builtin: true,
  created_at: true,
});

/** The template routes. */
export function templateRoutes(bus: Bus): RouteSpec[] {
  const routes = [
    route({
      method: "GET",
      path: "/api/templates",
      summary: "Thread templates: the built-ins and custom ones (the template_list tool)",
      responses: { "200": answer("An array of templates", z.array(listedTemplateSchema)) },
      handle: () =>
        json(
          templateList(bus).map(({ id, name, description, is_builtin, created_at }) => ({
            id,
            name,
            description,
            is_builtin,
            created_at,
          })),
        ),
    }),
    route({
      method: "POST",
      path: "/api/templates",
      summary: "Create (or replace) a custom template (the template_create tool)",
      body: templateCreateInput,
      responses: { "201": answer("The template", templateSchema) },
      handle: async ({ body }) => {
        const template = await templateCreate(bus, {
          ...body,
          default_metadata: body.default_metadata ?? body.metadata,
        });
        return json(template, 201);
      },
    }),
    route({
      method: "GET",
      path: "/api/templates/{id}",
      summary: "One template (the template_get tool)",
      responses: { "200": answer("The template", templateSchema) },
      handle: ({ params: { id } }) => json(requireTemplate(bus, id!)),
    }),
    route({
      method: "DELETE",
      path: "/api/templates/{id}",
      summary: "Delete a custom template (built-in ones are refused)",
      responses: { "204": { description: "Deleted" } },
      handle: async ({ params: { id } }) => {
        await templateDelete(bus, id!);
        return new Response(null, { status: 204 });
      },
    }),
  ];
  return routes as RouteSpec[];
}
