"""Check a draft against the library: read a draft, find its citations, resolve them to library
documents, judge each against the cited paper's best passage, suggest sources (issue 41)."""
