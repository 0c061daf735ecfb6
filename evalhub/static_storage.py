"""WhiteNoise's manifest storage of static files, with each file's URL worked out once.

Every ``{% static %}`` of a page asks the storage for a URL: the manifest lookup, two URL
parses and unquotes, some 0.2 ms per crowdworker page of four (bench/profile_serving.py).
The answer depends only on the name, the manifest (read when the storage is made; only
collectstatic's ``post_process`` rewrites it) and DEBUG, so it is kept per name. A name
missing from the manifest still raises every time: errors are not kept.
"""

from django.conf import settings
from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._urls: dict[tuple, str] = {}

    def url(self, name, force=False):
        key = (name, force, settings.DEBUG)
        url = self._urls.get(key)
        if url is None:
            url = self._urls[key] = super().url(name, force)
        return url

    def post_process(self, *args, **kwargs):
        # collectstatic hashes the files anew: URLs worked out before or during it may change.
        self._urls.clear()
        try:
            yield from super().post_process(*args, **kwargs)
        finally:
            self._urls.clear()
