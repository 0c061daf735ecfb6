"""Parsers that validate a whole uploaded file before anything is written."""
