"""`marlin-agent mcp`: the agent's tools over the Model Context Protocol (stdio).

A thin front door like the CLI: each tool checks its paths against the allowed roots,
calls the same library function the CLI calls, and returns the same pydantic document
(sent as structured content). Calls are bounded in time; indexing and extraction run as
jobs the client polls. The stdio transport points fd 1 at stderr while it serves, so a
stray print from any library cannot corrupt the protocol.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from marlin_agent.config import Settings
from marlin_agent.mcp_server.calls import MarlinTools
from marlin_agent.mcp_server.roots import PathGuard
from marlin_agent.mcp_server.startup import BEGIN_AFTER_SECONDS
from marlin_agent.version import __version__

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

INSTRUCTIONS = """\
Video research over local footage and URLs with Marlin-2B. `ask` answers a question with
verified moments (video, start, end in seconds, confidence, evidence) or found=false: trust
found=false, Marlin proposes a span for anything so only verified moments are reported. Beyond
"when": "every time X", "how many times X" (count), "what happens after/before X" (relation, with
the anchor's moment), "the first/last time X", "between X and Y", "how long does X last" (duration).
`search` ranks indexed moments by words and meaning; `find` and `caption` give Marlin's raw
output for one video, `describe` a short prose summary of one; `list_videos` lists what is
indexed. Unindexed footage is indexed first; for big folders call `index`
and poll `job_status` until state is done. A call that fails with still_running goes on as
the job it names: poll `job_status`, whose result is then the call's document. Paths must
lie inside the server's roots. `watch_status` (and the resource marlin://watch/alerts) shows the
standing questions a user runs with `marlin-agent watch`: their latest alerts and any gaps."""


def remote_tools(settings: Settings, roots: list[str | Path] | None = None) -> MarlinTools:
    """The state behind a remote front door: ``roots`` (else ``[mcp] roots``, else the cwd) bound every path."""
    allowed = list(roots or settings.mcp.roots or [Path.cwd()])
    guard = PathGuard(allowed, settings.mcp.allow_urls, settings.mcp.allow_private_urls)
    # Folders walked for the caller are confined too: a link inside a root must not bring in footage from
    # outside; and the caller's URLs stay off this machine's own networks unless the operator allows them.
    settings = settings.model_copy(update={"library": settings.library.model_copy(
        update={"confine_to": [str(root) for root in guard.roots], "internal_urls": settings.mcp.allow_private_urls})})
    return MarlinTools(settings, guard)


def build_server(settings: Settings, roots: list[str | Path] | None = None, verbose: bool = False,
                 preload: bool = False, tools: MarlinTools | None = None) -> MCPServer:
    """The MCP server over ``settings`` and ``roots`` (see ``remote_tools``), or over the state ``tools`` another
    front door shares with it; ``verbose`` logs libraries' debug lines on stderr (warnings only otherwise);
    ``preload`` loads the heavy modules and models shortly after start instead of at the first call."""
    from mcp.server.mcpserver import MCPServer

    from marlin_agent.mcp_server.toolset import ALERTS_RESOURCE, Toolset

    tools = tools or remote_tools(settings, roots)
    if preload:
        tools.startup.begin(delay=BEGIN_AFTER_SECONDS)
    # WARNING, not the SDK's INFO: at INFO every HTTP request (httpx) and every transcription
    # (faster-whisper) writes a line to the host's log of this server's stderr.
    server = MCPServer(name="marlin", version=__version__, instructions=INSTRUCTIONS,
                       log_level="DEBUG" if verbose else "WARNING")
    toolset = Toolset(tools, tools.guard)
    for function, hints in toolset.served_tools():
        server.tool(annotations=hints)(function)
    server.resource(ALERTS_RESOURCE, mime_type="application/json",
                    description="The latest alerts of every standing question inside the roots, newest last.")(
        toolset.watch_alerts)
    return server


def serve_stdio(settings: Settings, roots: list[str] | None = None, verbose: bool = False) -> None:
    """Serve on stdio; a host's opening requests are answered from an earlier start's replies while the SDK loads
    (``opening``)."""
    from marlin_agent.mcp_server.opening import serve_stdio_from_record

    serve_stdio_from_record(settings, roots, verbose, lambda: build_server(settings, roots, verbose=verbose,
                                                                           preload=True))
