/**
 * The stdio server's options, for the top-level help: apart from
 * `serve.ts`, whose modules (every profile's tools) a relay to the resident
 * bus never loads.
 *
 * @module
 */

/** The stdio server's options, for the top-level help. */
export const SERVE_OPTIONS = `Options (stdio server):
  --resident                Attach to this host's resident bus, starting it if none runs
                            (the default on a SQLite file)
  --standalone              Serve in this process, not on the resident bus (also
                            AGENT_BUS_STANDALONE=1)
  --profile peer|peerbus|mailbox|teacher|student|chatbus
                            Tool set: peer (topics, default), peerbus (bus.send, bus.broadcast,
                            bus.peers, bus.drain), mailbox (send_to_agent, check_mail),
                            teacher/student (onboarding Q&A), chatbus (AgentChatBus's
                            threads, msg_post/msg_wait, agents, reactions, edits, templates)
  --role teacher|student    Same as --profile teacher|student (default MCP_ROLE)
  --agent NAME              Mail identity of peerbus/mailbox, or who asks/answers for
                            student/teacher (default AGENT_BUS_AGENT)
  --server-name NAME        serverInfo.name reported to the client (default agent-bus)
  --no-drain                Hide bus.drain (peerbus)
  --push resources|claude-channel|none
                            How new mail is announced (default resources)`;
