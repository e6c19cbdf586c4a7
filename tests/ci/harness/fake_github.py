"""A fake GitHub REST API on 127.0.0.1 (an ephemeral port) with what `coldgate comment`, the
fork-safe comment workflow and `coldgate stack --github` call (GitHub REST docs "Issue
comments", "Pulls" and "Repositories"):

  GET   /repos/O/R/issues/N/comments?per_page=100[&page=P]   200, a JSON array, Link rel="next"
  POST  /repos/O/R/issues/N/comments   {"body": …}          201 {"id", "html_url", "body"}
  PATCH /repos/O/R/issues/comments/ID  {"body": …}          200
  GET   /repos/O/R/pulls/N                                  200 {"number", "head": {"sha", …}}
  GET   /repos/O/R/pulls?state=open&per_page=100[&page=P]   200, the open pull requests by
                                                            number, Link rel="next"
  GET   /repos/O/R                                          200 {"full_name", "default_branch"}

Tokens are registered per job with whether they may write: a write with a read-only token is
answered 403 {"message": "Resource not accessible by integration"}, as GitHub answers a fork's
pull_request token; an unknown token is 401. Every request is recorded.
"""

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class FakeGitHub:
    def __init__(self, page_size=None):
        self.lock = threading.RLock()
        self.tokens = {}        # token → may write
        self.comments = {}      # (repo, number) → [comment dict]
        self.pulls = {}         # (repo, number) → pull request dict
        self.repositories = {}  # repo → {"full_name", "default_branch"}
        self.requests = []      # (method, path, status)
        self.next_id = 1000
        self.page_size = page_size  # None: the per_page the client asks for
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _answer(self, status, body, headers=()):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
                with fake.lock:
                    fake.requests.append((self.command, self.path, status))

            def _body(self):
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length) or b"{}")

            def _handle(self):
                auth = self.headers.get("Authorization", "")
                token = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
                with fake.lock:
                    known = token in fake.tokens
                    may_write = fake.tokens.get(token, False)
                if not known:
                    return self._answer(401, {"message": "Bad credentials"})
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments", url.path)
                if m and self.command == "GET":
                    return self._list(m.group(1), int(m.group(2)), url.path, query)
                if m and self.command == "POST":
                    if not may_write:
                        return self._read_only()
                    return self._create(m.group(1), int(m.group(2)), self._body())
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/comments/(\d+)", url.path)
                if m and self.command == "PATCH":
                    if not may_write:
                        return self._read_only()
                    return self._update(m.group(1), int(m.group(2)), self._body())
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)", url.path)
                if m and self.command == "GET":
                    with fake.lock:
                        repository = fake.repositories.get(m.group(1))
                    if repository is None:
                        return self._answer(404, {"message": "Not Found"})
                    return self._answer(200, repository)
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/pulls", url.path)
                if m and self.command == "GET":
                    state = query.get("state", ["open"])[0]
                    with fake.lock:
                        items = [dict(p) for (r, _), p in sorted(fake.pulls.items())
                                 if r == m.group(1) and state in (p["state"], "all")]
                    return self._page(items, url.path, query, f"state={state}&")
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/pulls/(\d+)", url.path)
                if m and self.command == "GET":
                    with fake.lock:
                        pull = fake.pulls.get((m.group(1), int(m.group(2))))
                    if pull is None:
                        return self._answer(404, {"message": "Not Found"})
                    return self._answer(200, pull)
                return self._answer(404, {"message": "Not Found"})

            def _read_only(self):
                return self._answer(403, {"message": "Resource not accessible by integration",
                                          "documentation_url": "https://docs.github.com/rest"})

            def _list(self, repo, number, path, query):
                with fake.lock:
                    items = list(fake.comments.get((repo, number), []))
                return self._page(items, path, query)

            def _page(self, items, path, query, keep=""):
                """The page `query` asks for (per_page, page; 30 a page by default, as GitHub),
                with a Link rel="next" to the following one whose query starts with `keep`."""
                per_page = int(query.get("per_page", ["30"])[0])
                if fake.page_size:
                    per_page = fake.page_size
                page = int(query.get("page", ["1"])[0])
                chunk = items[(page - 1) * per_page:page * per_page]
                headers = []
                if page * per_page < len(items):
                    host = self.headers.get("Host")
                    headers.append(("Link", f'<http://{host}{path}?{keep}per_page={per_page}&page={page + 1}>; rel="next"'))
                return self._answer(200, chunk, headers)

            def _create(self, repo, number, body):
                with fake.lock:
                    fake.next_id += 1
                    comment = {"id": fake.next_id, "body": body["body"],
                               "html_url": f"https://github.invalid/{repo}/pull/{number}#issuecomment-{fake.next_id}"}
                    fake.comments.setdefault((repo, number), []).append(comment)
                return self._answer(201, comment)

            def _update(self, repo, comment_id, body):
                with fake.lock:
                    for (r, _), items in fake.comments.items():
                        for c in items:
                            if r == repo and c["id"] == comment_id:
                                c["body"] = body["body"]
                                return self._answer(200, c)
                return self._answer(404, {"message": "Not Found"})

            do_GET = do_POST = do_PATCH = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def add_token(self, token, may_write):
        with self.lock:
            self.tokens[token] = may_write

    def add_repository(self, repo, default_branch):
        with self.lock:
            self.repositories[repo] = {"full_name": repo, "default_branch": default_branch}

    def add_pull(self, repo, number, head_sha, head_ref, base_ref="", title="", head_repo=None):
        """An open pull request of `repo` from branch `head_ref` of `head_repo` (default: `repo`
        itself; a fork's full name otherwise) into `base_ref`; a later call for the same number
        replaces it (a new push)."""
        with self.lock:
            self.pulls[(repo, number)] = {
                "number": number, "state": "open", "title": title or head_ref,
                "html_url": f"https://github.com/{repo}/pull/{number}",
                "head": {"sha": head_sha, "ref": head_ref, "repo": {"full_name": head_repo or repo}},
                "base": {"ref": base_ref, "repo": {"full_name": repo}},
            }

    def comments_of(self, repo, number):
        with self.lock:
            return [dict(c) for c in self.comments.get((repo, number), [])]

    def writes(self):
        with self.lock:
            return [r for r in self.requests if r[0] in ("POST", "PATCH")]
