"""Frames -> settled table states -> game events; the durable game log."""
