"""REST API of the catalog: serializers, views, urls (mounted under /api/)."""
