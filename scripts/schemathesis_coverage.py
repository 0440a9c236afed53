"""Fail when the API fuzzing did not really test: an authenticated operation of the schema
that never answered 2xx (only 401/403, 4xx or errors) in the schemathesis HAR logs.

Usage: schemathesis_coverage.py SCHEMA_URL HAR [HAR ...]   (scripts/schemathesis.sh runs it)
Prints, per operation, the number of requests and the status codes seen.
"""

import collections
import json
import re
import sys
import urllib.request
from urllib.parse import urlsplit

# Operations whose success needs a real file the generator cannot make (a quote table in .csv or
# .xlsx with catalog ids): for them, a 400 from their own validation (authenticated, reached the
# handler) counts; their accepted path is tested in tests/functional/test_supplier_quotes.py.
FILE_UPLOADS = {("POST", "/api/v1/supplier-quotes/upload/")}


def main(schema_url: str, hars: list[str]) -> int:
    with urllib.request.urlopen(schema_url + "?format=json", timeout=30) as r:
        schema = json.loads(r.read())
    operations = []
    for path, ops in schema["paths"].items():
        pattern = re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$")
        for method, op in ops.items():
            if method in ("get", "post", "put", "patch", "delete"):
                anonymous_ok = op.get("security") is None or {} in op.get("security", [])
                operations.append((method.upper(), path, pattern, not anonymous_ok))
    seen: dict = collections.defaultdict(collections.Counter)
    for har in hars:
        with open(har) as f:
            entries = json.load(f)["log"]["entries"]
        for entry in entries:
            method, url = entry["request"]["method"], urlsplit(entry["request"]["url"]).path
            for op_method, path, pattern, _auth in operations:
                if op_method == method and pattern.match(url):
                    seen[(op_method, path)][entry["response"]["status"]] += 1
                    break
    untested = []
    for method, path, _pattern, authenticated in operations:
        codes = seen.get((method, path), collections.Counter())
        ok = sum(n for code, n in codes.items() if 200 <= code < 300)
        print(f"{method:6} {path:62} {sum(codes.values()):5} requests, 2xx {ok:4}, "
              + " ".join(f"{c}:{n}" for c, n in sorted(codes.items())))
        reached = ok or ((method, path) in FILE_UPLOADS and codes.get(400, 0) > 0)
        if authenticated and not reached:
            untested.append(f"{method} {path}")
    if untested:
        print(f"schemathesis coverage: {len(untested)} authenticated operation(s) never succeeded: "
              + ", ".join(untested))
        return 1
    print(f"schemathesis coverage: every authenticated operation ({sum(a for *_, a in operations)}) "
          "answered 2xx at least once")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
