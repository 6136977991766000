"""A Hugging Face hub on loopback: model folders served under the hub's own routes, for `huggingface_hub` to download.

`tools/make_hf_hub_fixtures.py` writes the committed cache (`tests/fixtures/hf_cache`) by downloading from it with
`huggingface_hub.snapshot_download`, so the layout (`blobs`, `refs`, `snapshots`, the tree listing) is exactly
huggingface_hub's; the tests download from it to exercise the online path without a network.

The routes are those `snapshot_download` and `hf_hub_download` use (huggingface_hub's `hf_api.py` and
`file_download.py`): `GET /api/models/<id>[/revision/<rev>]` (the repository's commit and files),
`GET /api/models/<id>/tree/<rev>` (the files with their git blob ids, LFS ones with their sha256) and
`HEAD`/`GET /<id>/resolve/<rev>/<file>` (the file, its commit and etag). An unknown repository answers 404 with
the hub's `X-Error-Code: RepoNotFound`. Only the standard library: it runs in the fixtures' venv too.

Example:
>>> import tempfile, huggingface_hub
>>> folder = tempfile.mkdtemp()
>>> with open(os.path.join(folder, "config.json"), "w") as f:
...     _ = f.write("{}")
>>> with LocalHub({"owner/tiny": folder}) as hub:
...     huggingface_hub.HfApi(endpoint=hub.endpoint).list_repo_files("owner/tiny")
['config.json']
"""

import hashlib
import http.server
import json
import os
import re
import threading
import urllib.parse

LFS_SUFFIXES = (".safetensors", ".bin", ".h5")  # stored in git LFS on the hub: etag and blob name are the sha256
_ID = r"(?P<repo>[\w.-]+(?:/[\w.-]+)?)"
_ROUTES = (("info", re.compile(rf"^/api/models/{_ID}(?:/revision/(?P<revision>[^/]+))?$")),
           ("tree", re.compile(rf"^/api/models/{_ID}/tree/(?P<revision>[^/]+)(?:/(?P<path>.*))?$")),
           ("file", re.compile(rf"^/{_ID}/resolve/(?P<revision>[^/]+)/(?P<path>.+)$")))


def _repository(folder):
    """`(commit, {name: (bytes, tree entry)})` of a folder's files (sub-folders included, symbolic links
    followed); the commit is a hash of the contents, so the same files give the same commit."""
    files, digest = {}, hashlib.sha1()
    for root, _, names in sorted(os.walk(folder, followlinks=True)):
        for name in sorted(names):
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                data = f.read()
            relative = os.path.relpath(path, folder).replace(os.sep, "/")
            blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
            entry = {"type": "file", "path": relative, "size": len(data), "oid": blob}
            if relative.endswith(LFS_SUFFIXES):
                entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
            files[relative] = (data, entry)
            digest.update(f"{relative}\0{blob}\0".encode())
    return digest.hexdigest(), files


class LocalHub:
    """Serves `{repo_id: folder}` on 127.0.0.1 (a free port) while in a `with` block; `endpoint` is its URL
    (what `HF_ENDPOINT` or `endpoint=` takes); `requests` lists the `(method, path, Authorization header)` it
    answered. The repositories in `gated` answer only requests with a token, as a gated one whose conditions
    the token's user accepted (401 and the hub's `X-Error-Code: GatedRepo` without)."""

    def __init__(self, repositories, gated=()):
        self.repositories = {repo_id: _repository(folder) for repo_id, folder in repositories.items()}
        self.gated = set(gated)
        self.requests = []
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                hub._answer(self, body=True)

            def do_HEAD(self):
                hub._answer(self, body=False)

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, handler, body):
        path = urllib.parse.unquote(urllib.parse.urlsplit(handler.path).path)
        self.requests.append((handler.command, path, handler.headers.get("Authorization")))
        for kind, route in _ROUTES:
            match = route.match(path)
            if match:
                break
        else:
            return self._send(handler, 404, b"", {"X-Error-Code": "EntryNotFound"}, body)
        repo_id = match["repo"]
        if repo_id not in self.repositories:
            return self._send(handler, 404, b'{"error": "Repository not found"}', {"X-Error-Code": "RepoNotFound"},
                              body)
        if repo_id in self.gated and not handler.headers.get("Authorization"):
            return self._send(handler, 401, b'{"error": "Access to this model is restricted"}',
                              {"X-Error-Code": "GatedRepo", "X-Error-Message": "Access to this model is restricted"},
                              body)
        commit, files = self.repositories[repo_id]
        if match["revision"] not in (None, "main", commit):
            return self._send(handler, 404, b'{"error": "Invalid rev id"}', {"X-Error-Code": "RevisionNotFound"},
                              body)
        if kind == "info":
            info = {"id": repo_id, "modelId": repo_id, "sha": commit, "private": False,
                    "siblings": [{"rfilename": name} for name in files]}
            return self._send(handler, 200, json.dumps(info).encode(), {"Content-Type": "application/json"}, body)
        if kind == "tree":
            prefix = (match["path"] or "").strip("/")
            entries = [entry for name, (_, entry) in files.items() if not prefix or name.startswith(prefix + "/")]
            return self._send(handler, 200, json.dumps(entries).encode(), {"Content-Type": "application/json"}, body)
        if match["path"] not in files:
            return self._send(handler, 404, b"", {"X-Error-Code": "EntryNotFound"}, body)
        data, entry = files[match["path"]]
        etag = entry["lfs"]["oid"] if "lfs" in entry else entry["oid"]
        headers = {"X-Repo-Commit": commit, "ETag": f'"{etag}"', "Content-Type": "application/octet-stream"}
        if "lfs" in entry:
            headers.update({"X-Linked-Etag": f'"{etag}"', "X-Linked-Size": str(len(data))})
        return self._send(handler, 200, data, headers, body)

    @staticmethod
    def _send(handler, status, data, headers, body):
        handler.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(data))}.items():
            handler.send_header(name, value)
        handler.end_headers()
        if body:
            handler.wfile.write(data)
