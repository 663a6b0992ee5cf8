"""A local HTTP stand-in for OpenML serving recorded responses (no network in the tests).

``tests/data/openml/561/`` holds OpenML's responses for data id 561 (``cpu``) as recorded by scikit-learn's own
test suite (``sklearn/datasets/tests/data/openml/id_561``, BSD-3-Clause; the data are public on OpenML): the data
description, features, qualities, the name search and the gzipped ARFF. :func:`serve` answers on 127.0.0.1 the
URLs scikit-learn's ``fetch_openml`` asks for, after :func:`redirect` points scikit-learn at it.
"""
from __future__ import annotations

import gzip
import http.server
import json
import re
import threading
from contextlib import contextmanager
from pathlib import Path

RECORDED = Path(__file__).parent / "data" / "openml"

ROUTES = {
    "/api/v1/json/data/561": "561/api-v1-jd-561.json.gz",
    "/api/v1/json/data/features/561": "561/api-v1-jdf-561.json.gz",
    "/api/v1/json/data/qualities/561": "561/api-v1-jdq-561.json.gz",
    "/api/v1/json/data/list/data_name/cpu/limit/2/status/active/": "561/api-v1-jdl-dn-cpu-l-2-s-act-.json.gz",
    "/data/v1/download/52739/cpu.arff": "561/data-v1-dl-52739.arff.gz",
}
"""Request path -> recorded file (gzip)."""

URL_CONSTANTS = ("_SEARCH_NAME", "_DATA_INFO", "_DATA_FEATURES", "_DATA_QUALITIES")
"""The URL templates of ``sklearn.datasets._openml`` (each starts with OpenML's scheme and host)."""


def _body(path: str, base: str, edit) -> bytes:
    data = gzip.decompress((RECORDED / ROUTES[path]).read_bytes())
    if path.startswith("/api/v1/json/data/") and "/" not in path.removeprefix("/api/v1/json/data/"):
        document = json.loads(data)
        description = document["data_set_description"]
        description["url"] = re.sub(r"^https?://[^/]+", base, description["url"])  # the ARFF from here too
        data = json.dumps(document).encode()
    return gzip.compress(edit(path, data))


@contextmanager
def serve(edit=lambda path, data: data):
    """Run the stand-in on a free loopback port; yields its base URL (``http://127.0.0.1:PORT``).

    Parameters
    ----------
    edit : callable (path, bytes) -> bytes
        Changes a response before it is sent (e.g. to corrupt the data).
    """
    box = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the http.server API)
            if self.path not in ROUTES:
                self.send_error(404)
                return
            body = _body(self.path, box["base"], edit)
            self.send_response(200)
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # keep the test output clean
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    box["base"] = f"http://127.0.0.1:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield box["base"]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def redirect(monkeypatch, base: str) -> None:
    """Point scikit-learn's OpenML URL templates at ``base`` (scheme and host replaced, path kept)."""
    import sklearn.datasets._openml as openml

    for name in URL_CONSTANTS:
        monkeypatch.setattr(openml, name, re.sub(r"^https?://[^/]+", base, getattr(openml, name)))
