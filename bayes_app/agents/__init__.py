"""The multi-agent pipeline that writes the mindmap: planner, researchers, critic, writer,
router, and the map run kinds (`agents.kinds`, registered by `bayes_app.registry`).

Roles work with any OpenAI-compatible model (JSON output) and with the offline provider
(extractive). Domain code: no Reflex or broker imports."""
