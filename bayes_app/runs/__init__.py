"""Runs: the operation lifecycle (start, cancel, stop, finalize, reap)."""
