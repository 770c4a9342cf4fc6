"""The research mindmap: maps, nodes, citations, relations, proposals, undo, export.

Domain code (no Reflex, broker or Redis): `service` (maps + node edits + undo + views),
`citations` (attach / check support / accept rewrite), `export` (Markdown, DOCX, BibTeX,
JSON), `runs` (starting map runs), `layout`, `support` (extractive judgements).
"""

from bayes_app.maps.errors import MapError, MapNotFound

__all__ = ["MapError", "MapNotFound"]
