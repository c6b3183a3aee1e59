"""The Python MCP SDK's own client (PyPI `mcp`, installed by scripts/setup.sh into a venv) against
Gatehouse's MCP endpoint over Streamable HTTP: lists the tools, runs one execute_code, and prints
one JSON object on stdout: {"protocol", "tools", "isError", "text", "structured"}.

Usage: python mcp_http_client.py <endpoint URL> <bearer token> <TypeScript snippet>
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, token: str, code: str) -> None:
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx2.Timeout(30.0, read=300.0),
    )
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        listed = await client.list_tools()
        result = await client.call_tool("execute_code", {"code": code})
        text = "\n".join(block.text for block in result.content if block.type == "text")
        print(
            json.dumps(
                {
                    "protocol": client.protocol_version,
                    "tools": [tool.name for tool in listed.tools],
                    "isError": result.is_error,
                    "text": text,
                    "structured": result.structured_content,
                }
            )
        )


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: mcp_http_client.py <endpoint URL> <bearer token> <TypeScript snippet>")
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
