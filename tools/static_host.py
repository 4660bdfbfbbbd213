"""The built site as a static host serves it (GitHub Pages, say): text files gzip-compressed
for a client that accepts it, others (images, fonts, wheels) as they are. `serving` is the
one server of the tests and tools; `served_size` is a file's bytes on the wire."""

import contextlib
import functools
import gzip
import http.server
import io
import threading
from pathlib import Path

# What a static host compresses: text. A font (woff2), an image or a wheel is compressed by
# its own format already, and goes as it is.
COMPRESSED = {".html", ".js", ".css", ".json", ".svg", ".txt", ".map", ".ipynb", ".md", ".xml"}
LEVEL = 6  # gzip's default level, which hosts use


def served(data: bytes, name: str) -> bytes:
    """The body a static host sends for a file `name` holding `data`."""
    return gzip.compress(data, LEVEL, mtime=0) if Path(name).suffix in COMPRESSED else data


def served_size(path: Path) -> int:
    """How many bytes the file at `path` takes on the wire."""
    return len(served(path.read_bytes(), path.name))


class Handler(http.server.SimpleHTTPRequestHandler):
    """Files of a folder, text gzip-compressed where the client accepts it; no log. Python's
    server speaks HTTP/1.0, a connection a request; a host's HTTP/2 shares one among them."""

    def send_head(self):
        path = Path(self.translate_path(self.path))
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.is_file() and path.suffix in COMPRESSED):
            return super().send_head()
        body = served(path.read_bytes(), path.name)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serving(folder: Path):
    """`folder` served on a free localhost port as a static host serves it: its URL."""
    handler = functools.partial(Handler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
