"""The server of the tests and tools (tools/static_host.py) sends the site as a static host
does: text gzip-compressed for a client that accepts it, fonts and images as they are."""

import gzip
from urllib.request import Request, urlopen

from static_host import served_size, serving


def test_text_goes_compressed_to_a_client_that_accepts_it_and_a_font_as_it_is(tmp_path):
    (tmp_path / "page.js").write_text("const x = 1;\n" * 1000)
    (tmp_path / "font.woff2").write_bytes(bytes(range(256)) * 4)
    gzipped = {"Accept-Encoding": "gzip"}
    with serving(tmp_path) as site:
        with urlopen(Request(f"{site}/page.js", headers=gzipped)) as sent:
            encoding, body = sent.headers["Content-Encoding"], sent.read()
        with urlopen(f"{site}/page.js") as sent:
            plain = sent.read()
        with urlopen(Request(f"{site}/font.woff2", headers=gzipped)) as sent:
            font_encoding, font = sent.headers["Content-Encoding"], sent.read()
    assert encoding == "gzip"
    assert gzip.decompress(body) == plain == (tmp_path / "page.js").read_bytes()
    assert len(body) == served_size(tmp_path / "page.js") < len(plain) / 10
    assert (font_encoding, font) == (None, (tmp_path / "font.woff2").read_bytes())
    assert served_size(tmp_path / "font.woff2") == len(font)
