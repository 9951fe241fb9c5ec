#!/usr/bin/env python3
"""A weft handler, in Python with its standard library alone: the product
records of examples/products, through the command protocol.

    weft crawl --handler 'text/html=python3 examples/products-py/products.py' \
        --events products.jsonl https://shop.example/

weft writes a JSON line per HTML page (its URL and the file its body is
in); this program answers a line with the page's fields: the title (h1.title)
and the price (.price .amount) of a product page, nothing for other pages.
weft puts the fields in the page's event, a line of --events.
"""
import json
import sys
from html.parser import HTMLParser


class Product(HTMLParser):
    """Collects the text of h1.title, and of .amount inside .price."""

    def __init__(self):
        super().__init__()
        self.stack = []  # (tag, classes) of the open elements
        self.title = self.price = None

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        self.stack.append((tag, classes))

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data):
        if not self.stack:
            return
        tag, classes = self.stack[-1]
        if tag == "h1" and "title" in classes:
            self.title = (self.title or "") + data
        elif "amount" in classes and any("price" in c for _, c in self.stack[:-1]):
            self.price = (self.price or "") + data


for line in sys.stdin:
    req = json.loads(line)
    answer = {"id": req["id"]}
    with open(req["body_file"], "rb") as f:
        page = Product()
        page.feed(f.read().decode("utf-8", "replace"))
    if page.title is not None:
        answer["fields"] = {"title": page.title.strip(), "price": (page.price or "").strip()}
    print(json.dumps(answer), flush=True)
