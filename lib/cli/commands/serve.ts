/**
 * `agent-bus [options]` with no command: the stdio MCP server an MCP client
 * starts, with the tool set chosen by `--profile` or `--role`.
 *
 * @module
 */

import { cleanMailAgent } from "../../bus/mail.ts";
import type { PushMode } from "../../mcp/features/mod.ts";
import { type Profile, PROFILE_NAMES, profileNamed, ROLES } from "../../mcp/profiles/mod.ts";
import type { SessionChoice } from "../../transports/resident/bus.ts";
import { serveStdio } from "../../transports/stdio.ts";
import { choiceOption, type CliContext, parseCommand, UsageError } from "../command.ts";
import { SERVE_OPTION_TYPES } from "./serve_options.ts";

const PUSH_MODES = ["resources", "claude-channel", "none"] as const satisfies readonly PushMode[];

/**
 * Serve MCP on stdio with the options in `args`, in this process.
 *
 * @returns the exit code once the client has gone
 */
export async function serveFromArgs(args: string[], ctx: CliContext): Promise<number> {
  await serveStdio({
    ...chooseSession(args, ctx),
    config: ctx.config,
    configWarnings: ctx.configWarnings,
    log: ctx.log,
  });
  return 0;
}

/**
 * What the serve options in `args` choose: the profile, its agent, the
 * server's name and push mode (`--resident` and `--standalone` say where
 * it runs, and are read before).
 *
 * @throws {UsageError} what is wrong with them
 */
export function chooseSession(
  args: string[],
  ctx: Pick<CliContext, "config" | "log">,
): SessionChoice {
  const { values, positionals } = parseCommand(args, SERVE_OPTION_TYPES);
  if (positionals.length > 0) throw new UsageError(`Unknown command "${positionals[0]}"`);
  return {
    ...chooseProfile(values, ctx),
    serverName: values["server-name"]?.trim() || undefined,
    noDrain: values["no-drain"] ?? false,
    push: choiceOption(values.push, "push", PUSH_MODES, "resources"),
  };
}

/**
 * The profile from `--profile`, `--role` or `MCP_ROLE`, and its agent name
 * from `--agent` or `AGENT_BUS_AGENT`, as the profile wants one (required,
 * optional, or not used).
 */
function chooseProfile(
  values: { profile?: string; role?: string; agent?: string },
  ctx: Pick<CliContext, "config" | "log">,
): { profile: Profile; agent: string | undefined } {
  const roles = ROLES.map((p) => p.name);
  const role = values.role ?? ctx.config.role;
  if (values.role !== undefined && !roles.includes(values.role)) {
    throw new UsageError(`--role must be ${roles.join(" or ")}, not "${values.role}"`);
  }
  if (values.role === undefined && role !== undefined && !roles.includes(role)) {
    ctx.log.warn(`Ignoring MCP_ROLE="${role}": expected ${roles.join(" or ")}`);
  }
  if (values.profile !== undefined && values.role !== undefined && values.profile !== values.role) {
    throw new UsageError(
      `--profile ${values.profile} and --role ${values.role} disagree; give one`,
    );
  }
  const fromRole = role !== undefined && roles.includes(role) ? role : undefined;
  const name = choiceOption(values.profile ?? fromRole, "profile", PROFILE_NAMES, "peer");
  const profile = profileNamed(name)!;
  if (profile.agent === "ignored") return { profile, agent: undefined };
  const agent = values.agent?.trim() || ctx.config.agent;
  if (!agent) {
    if (profile.agent === "optional") return { profile, agent: undefined };
    throw new UsageError(`--profile ${name} needs a name: --agent NAME or AGENT_BUS_AGENT`);
  }
  try {
    return { profile, agent: cleanMailAgent(agent, "agent") };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}
