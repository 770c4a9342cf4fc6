"""The multi-agent pipeline that writes the mindmap: planner, researchers, critic, writer,
router, and the map run kinds (importing this package registers them with the executor).

Roles work with any OpenAI-compatible model (JSON output) and with the offline provider
(extractive). Domain code: no Reflex or broker imports."""

from bayes_app.agents import kinds  # noqa: F401  (registers the run kinds)

from bayes_app.maps.runs import MAP_KINDS  # noqa: E402,F401
