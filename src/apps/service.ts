/**
 * What the apps area lends other areas: the MCP client of its host (the Responses API's `mcp` tool
 * connects, lists and calls with it) and the fetch that routes its transports through the outbound guard.
 */
export { callToolRaw, connectServer, listAllTools, type ConnectOptions, type ServerSpec } from './mcp.js';
export { mcpFetch } from './host/fetch.js';
