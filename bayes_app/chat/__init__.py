"""The Ask chat: conversations, their memory budget, and the agent's tools."""
