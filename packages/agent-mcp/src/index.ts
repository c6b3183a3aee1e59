/** Gatehouse as an MCP server for agents: the Code Mode tools over one workspace's bindings. */
export {};
