"""Extraction tables: one row per paper, one column per question, each cell a value with the
verbatim sentence (and page) it rests on. Pure domain code: the columns' rules (`columns`), the
paper's sentences (`evidence`), the offline extractor (`extract`), storage and access
(`service`), exports (`export`) and the fill run kind (`fill`)."""
