"""Loaded with `-p` before pytest-django reads the settings: the tests run in embedded mode.

Settings are read once, at import, before any conftest runs; DEBUG off is the default (it
needs a SECRET_KEY and serves static files from the collectstatic manifest), so the tests
say they are an embedded run. A test that needs production settings runs them in a
subprocess (tests/test_deployment.py).
"""

import os

os.environ.setdefault("DEBUG", "1")
