"""The only service users reach: identity, policy, REST, MCP and the web UI."""
