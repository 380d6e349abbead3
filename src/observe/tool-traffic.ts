// Requests from Cerulean's own tools: the CLI (User-Agent `cerulean-cli/…`) and the web explorer
// (`x-ms-useragent: cerulean-explorer/…`, as browsers may not set User-Agent). An export, an
// import or a page of the explorer is no application's access pattern, so the workload watch
// (insights, partition metrics) leaves them out; request metrics still count them.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingHttpHeaders } from 'node:http';

const toolAgentPattern = /(^|\s)cerulean-(cli|explorer)\//;
const toolContext = new AsyncLocalStorage<true>();

export function isToolAgent(headers: IncomingHttpHeaders): boolean {
  const agents = [headers['user-agent'], headers['x-ms-useragent']];
  return agents.some((agent) => typeof agent === 'string' && toolAgentPattern.test(agent));
}

/** Runs `work` (a request's operation) marked as a tool's when `headers` say so. */
export function runAsToolWhen<T>(headers: IncomingHttpHeaders, work: () => T): T {
  return isToolAgent(headers) ? toolContext.run(true, work) : work();
}

/** True while serving a tool's request (inside runAsToolWhen). */
export function servingTool(): boolean {
  return toolContext.getStore() === true;
}
