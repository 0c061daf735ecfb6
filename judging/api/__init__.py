"""REST API of automatic judges (judging/api/views.py)."""
