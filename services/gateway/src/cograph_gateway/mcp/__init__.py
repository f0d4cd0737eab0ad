"""The gateway's MCP face: the endpoint (transport and identity), the server (argument strictness
and metrics), the tools (thin adapters over the operations) and their agent-oriented results."""

from cograph_gateway.mcp.endpoint import McpEndpoint
from cograph_gateway.mcp.tools import TOOL_DESCRIPTIONS

__all__ = ["TOOL_DESCRIPTIONS", "McpEndpoint"]
