"""A real MCP client (the Python `mcp` SDK) against `hive-agent mcp`.

Usage: mcp_client.py HIVE_AGENT SOCKET
Starts `HIVE_AGENT mcp --socket SOCKET` over stdio, lists the tools, calls
`send` to the operator, `send` to an unknown agent (a refusal) and
`set_status` without its argument (bad input), and prints one JSON line:
{"server": name, "tools": [...], "schemas": {tool: required}, "calls": {label: [is_error, text]}}.
The Rust test (tests/harness_clients.rs) checks it and the daemon's side.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main(agent: str, socket: str) -> None:
    params = StdioServerParameters(command=agent, args=["mcp", "--socket", socket])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            listed = await session.list_tools()
            calls = {}
            for label, tool, args in [
                ("send_operator", "send", {"to": "operator", "body": "hello from the python sdk"}),
                ("send_unknown", "send", {"to": "nobody-here", "body": "x"}),
                ("status_missing_text", "set_status", {}),
                ("not_offered", "kill", {"name": "bob"}),
            ]:
                result = await session.call_tool(tool, args)
                text = " ".join(c.text for c in result.content if getattr(c, "text", None))
                calls[label] = [bool(result.is_error), text]
            print(
                json.dumps(
                    {
                        "server": init.server_info.name,
                        "tools": [t.name for t in listed.tools],
                        "schemas": {t.name: t.input_schema.get("required", []) for t in listed.tools},
                        "calls": calls,
                    }
                )
            )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
