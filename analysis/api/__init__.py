"""REST API of analysis results: views, urls (mounted under /api/)."""
