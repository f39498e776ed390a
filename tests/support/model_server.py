"""A local HTTP server for download tests (port 0 on 127.0.0.1, in a thread), with Range and If-Range
support, that can drop a connection half way, serve wrong bytes, answer 404, or be busy (429/5xx, with
or without Retry-After) for a number of requests. No internet."""

import hashlib
from http.server import BaseHTTPRequestHandler


class ModelServer:
    """What the test server serves and how it misbehaves; it records each request's path and Range."""

    def __init__(self):
        self.files = {}
        self.drop_after = {}  # path -> bytes sent before the connection is closed, once
        self.wrong = set()  # paths served with every byte flipped
        self.ignore_range = False  # answer a Range request with the whole file (200), as some servers do
        self.etags = True  # send an ETag (the body's sha256) and honour If-Range with it
        # path -> what its next requests get, one entry each, in order: (status, Retry-After or None), or
        # None to serve the file; when the list is used up the file is served
        self.busy = {}
        self.requests = []
        self.if_ranges = []  # each request's If-Range header
        self.port = 0

    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests.append((self.path, self.headers.get("Range")))
                server.if_ranges.append(self.headers.get("If-Range"))
                answers = server.busy.get(self.path)
                answer = answers.pop(0) if answers else None
                if answer is not None:
                    status, retry_after = answer
                    self.send_response(status)
                    if retry_after is not None:
                        self.send_header("Retry-After", retry_after)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = server.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                if self.path in server.wrong:
                    body = bytes(b ^ 0xFF for b in body)
                start = 0
                etag = f'"{hashlib.sha256(body).hexdigest()[:16]}"'
                rng = None if server.ignore_range else self.headers.get("Range")
                if rng and self.headers.get("If-Range") not in (None, etag):
                    rng = None  # the file changed since the client's validator: send all of it
                if rng:
                    start = int(rng.split("=")[1].split("-")[0])
                    if start >= len(body):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(body)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(body) - start))
                if server.etags:
                    self.send_header("ETag", etag)
                self.end_headers()
                cut = server.drop_after.pop(self.path, None)
                self.wfile.write(body[start:] if cut is None else body[start:cut])
                self.close_connection = True

            def log_message(self, *args):
                pass

        return Handler
