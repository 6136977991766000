"""A Hugging Face hub on loopback: model folders served under the hub's own routes, for `huggingface_hub` to download.

`tools/make_hf_hub_fixtures.py` writes the committed cache (`tests/fixtures/hf_cache`) by downloading from it with
`huggingface_hub.snapshot_download`, so the layout (`blobs`, `refs`, `snapshots`, the tree listing) is exactly
huggingface_hub's; the tests download from it to exercise the online path without a network.

The routes are those `snapshot_download` and `hf_hub_download` use (huggingface_hub's `hf_api.py` and
`file_download.py`): `GET /api/models/<id>[/revision/<rev>]` (the repository's commit and files),
`GET /api/models/<id>/tree/<rev>` (the files with their git blob ids, LFS ones with their sha256) and
`HEAD`/`GET /<id>/resolve/<rev>/<file>` (the file, its commit and etag). An unknown repository answers 404 with
the hub's `X-Error-Code: RepoNotFound`. Only the standard library: it runs in the fixtures' venv too.

Pushes land too, through the routes `HfApi.create_repo`, `create_branch` and `upload_folder` (`create_commit`) use:
`POST /api/repos/create`, `POST /api/models/<id>/branch/<branch>`, `POST /api/validate-yaml` (a card's header:
accepted unchecked; the tests read it back with `huggingface_hub.ModelCard`), `POST
/api/models/<id>/preupload/<rev>` (every file answered as a regular git file, sent inline) and `POST /api/models/<id>/commit/<rev>[?create_pr=1]` (the
hub's ndjson commit; a pull request becomes the branch `pr-<n>`). A write needs a token (401 without, as the hub); a private repository is answered only with
one (404 without, as the hub); `commits` lists the `(repo id, branch, summary)` of each commit received.

Example:
>>> import tempfile, huggingface_hub
>>> folder = tempfile.mkdtemp()
>>> with open(os.path.join(folder, "config.json"), "w") as f:
...     _ = f.write("{}")
>>> with LocalHub({"owner/tiny": folder}) as hub:
...     huggingface_hub.HfApi(endpoint=hub.endpoint).list_repo_files("owner/tiny")
['config.json']
"""

import base64
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
_WRITE_ROUTES = (("create", re.compile(r"^/api/repos/create$")),
                 ("validate", re.compile(r"^/api/validate-yaml$")),
                 ("branch", re.compile(rf"^/api/models/{_ID}/branch/(?P<revision>[^/]+)$")),
                 ("preupload", re.compile(rf"^/api/models/{_ID}/preupload/(?P<revision>[^/]+)$")),
                 ("commit", re.compile(rf"^/api/models/{_ID}/commit/(?P<revision>[^/]+)$")))


def _repository(folder):
    """`(commit, {name: (bytes, tree entry)})` of a folder's files (sub-folders included, symbolic links
    followed)."""
    contents = {}
    for root, _, names in sorted(os.walk(folder, followlinks=True)):
        for name in sorted(names):
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                contents[os.path.relpath(path, folder).replace(os.sep, "/")] = f.read()
    return _commit(contents)


def _commit(contents):
    """`(commit, {name: (bytes, tree entry)})` of `{name: bytes}`; the commit is a hash of the contents, so the
    same files give the same commit."""
    files, digest = {}, hashlib.sha1()
    for relative, data in sorted(contents.items()):
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
        # {repo id: {branch: (commit, files)}}
        self.branches = {repo_id: {"main": _repository(folder)} for repo_id, folder in repositories.items()}
        self.gated = set(gated)
        self.private = set()
        self.requests = []
        self.commits = []
        self._lock = threading.Lock()
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                hub._answer(self, body=True)

            def do_HEAD(self):
                hub._answer(self, body=False)

            def do_POST(self):
                with hub._lock:
                    hub._write(self)

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
        if repo_id not in self.branches or (repo_id in self.private and not handler.headers.get("Authorization")):
            return self._send(handler, 404, b'{"error": "Repository not found"}', {"X-Error-Code": "RepoNotFound"},
                              body)
        if repo_id in self.gated and not handler.headers.get("Authorization"):
            return self._send(handler, 401, b'{"error": "Access to this model is restricted"}',
                              {"X-Error-Code": "GatedRepo", "X-Error-Message": "Access to this model is restricted"},
                              body)
        revision = self._revision(repo_id, match["revision"] or "main")
        if revision is None:
            return self._send(handler, 404, b'{"error": "Invalid rev id"}', {"X-Error-Code": "RevisionNotFound"},
                              body)
        commit, files = revision
        if kind == "info":
            info = {"id": repo_id, "modelId": repo_id, "sha": commit, "private": repo_id in self.private,
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

    def _revision(self, repo_id, revision):
        """`(commit, files)` of a branch or commit of `repo_id`, or None."""
        branches = self.branches[repo_id]
        if revision in branches:
            return branches[revision]
        return next((state for state in branches.values() if state[0] == revision), None)

    def _write(self, handler):
        """Answers a push: a new repository, a branch, a pre-upload question or a commit."""
        url = urllib.parse.urlsplit(handler.path)
        path, query = urllib.parse.unquote(url.path), urllib.parse.parse_qs(url.query)
        payload = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        self.requests.append((handler.command, path, handler.headers.get("Authorization")))
        kind, match = next(((kind, route.match(path)) for kind, route in _WRITE_ROUTES if route.match(path)),
                           (None, None))
        if kind is None:
            return self._send(handler, 404, b"", {}, True)
        if not handler.headers.get("Authorization"):
            return self._send(handler, 401, b'{"error": "Invalid username or password."}', {}, True)
        if kind == "validate":
            return self._json(handler, {"errors": [], "warnings": []})
        if kind == "create":
            request = json.loads(payload)
            repo_id = "/".join(part for part in (request.get("organization"), request["name"]) if part)
            if repo_id in self.branches:
                return self._send(handler, 409, json.dumps({"error": "You already created this model repo",
                                                            "url": f"{self.endpoint}/{repo_id}"}).encode(), {}, True)
            self.branches[repo_id] = {"main": _commit({})}
            if request.get("private") or request.get("visibility") == "private":
                self.private.add(repo_id)
            return self._json(handler, {"url": f"{self.endpoint}/{repo_id}", "name": repo_id})
        repo_id = match["repo"]
        if repo_id not in self.branches:
            return self._send(handler, 404, b'{"error": "Repository not found"}', {"X-Error-Code": "RepoNotFound"},
                              True)
        branches = self.branches[repo_id]
        if kind == "branch":
            if match["revision"] in branches:
                return self._send(handler, 409, b'{"error": "Reference already exists"}', {}, True)
            start = json.loads(payload or b"{}").get("startingPoint") or "main"
            branches[match["revision"]] = self._revision(repo_id, start)
            return self._json(handler, {})
        if match["revision"] not in branches:
            return self._send(handler, 404, b'{"error": "Invalid rev id"}', {"X-Error-Code": "RevisionNotFound"},
                              True)
        if kind == "preupload":
            files = json.loads(payload)["files"]
            return self._json(handler, {"files": [{"path": file["path"], "uploadMode": "regular",
                                                   "shouldIgnore": False, "oid": None} for file in files]})
        return self._apply_commit(handler, repo_id, match["revision"], payload, bool(query.get("create_pr")))

    def _apply_commit(self, handler, repo_id, branch, payload, create_pr):
        """Applies an ndjson commit (header, inline files, deletions) to `branch`, or to a new pull request's."""
        branches = self.branches[repo_id]
        contents = {name: data for name, (data, _) in branches[branch][1].items()}
        summary = ""
        for line in payload.splitlines():
            item = json.loads(line)
            if item["key"] == "header":
                summary = item["value"]["summary"]
            elif item["key"] == "file":
                contents[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
            elif item["key"] == "deletedFile":
                contents.pop(item["value"]["path"], None)
            else:
                return self._send(handler, 400, json.dumps({"error": f"not served here: {item['key']}"}).encode(),
                                  {}, True)
        number = sum(name.startswith("pr-") for name in branches) + 1
        if create_pr:
            branch = f"pr-{number}"
        branches[branch] = _commit(contents)
        self.commits.append((repo_id, branch, summary))
        commit = branches[branch][0]
        return self._json(handler, {"commitOid": commit, "commitUrl": f"{self.endpoint}/{repo_id}/commit/{commit}",
                                    "pullRequestUrl": f"{self.endpoint}/{repo_id}/discussions/{number}"
                                    if create_pr else None})

    def _json(self, handler, value):
        return self._send(handler, 200, json.dumps(value).encode(), {"Content-Type": "application/json"}, True)

    @staticmethod
    def _send(handler, status, data, headers, body):
        handler.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(data))}.items():
            handler.send_header(name, value)
        handler.end_headers()
        if body:
            handler.wfile.write(data)
