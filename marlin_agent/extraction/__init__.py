"""Structured extraction: footage in, rows matching the user's JSON Schema out."""
