"""The tools of Loom's core MCP listing, as a client should see them (stdio and /mcp alike)."""

CORE_TOOLS = [
    "loom_brief_get",
    "loom_brief_list",
    "loom_brief_save",
    "loom_context_pack",
    "loom_memory_pin",
    "loom_memory_search",
    "loom_memory_set",
    "loom_search",
    "loom_working_memory_get",
    "loom_working_memory_set",
]
