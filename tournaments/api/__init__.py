"""REST API of tournaments: serializers, views, urls (mounted under /api/)."""
