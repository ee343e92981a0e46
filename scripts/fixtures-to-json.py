#!/usr/bin/env python3
"""Converts the shared Kubernetes YAML fixtures into the JSON the API server actually sends.

The daemon only ever decodes JSON (LIST bodies and watch lines), so its tests read JSON. This script
turns every YAML file in the shared fixture directory into JSON under tests/fixtures/k8s/ and copies
the .json/.jsonl fixtures verbatim. CI does not run it: the generated files are committed. Run it
again (and commit the result) whenever the shared fixtures change; `--check` only reports drift.

Conversion rules (see tests/fixtures/k8s/README.md):
* One JSON file per YAML document: `<stem>.json` for single-document files, `<stem>-<n>.json`
  (n = 1, 2, ... in document order, empty documents skipped) for multi-document files.
* Scalars keep the type the API server gives them: YAML timestamps stay strings (PyYAML would turn
  them into datetime objects), quoted strings stay strings, plain integers stay JSON numbers, and
  YAML 1.1 sexagesimal numbers (`1:30`) are not recognised (they are strings, as in go-yaml/kubectl).
* A real API server always sends `metadata.uid`. Published excerpts often elide it, so an object
  (or List item) with a `metadata.name` but no `metadata.uid` gets a deterministic synthetic one:
  uuid5(NAMESPACE_URL, "firstwork-fixture/<output file name>/<JSON pointer of the object>").
  Nothing else is added or changed.
"""
import argparse
import json
import pathlib
import re
import shutil
import sys
import uuid

import yaml

TIMESTAMP = "tag:yaml.org,2002:timestamp"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"


class K8sLoader(yaml.SafeLoader):
    """SafeLoader without timestamps and without YAML 1.1 base-60 numbers."""


K8sLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (TIMESTAMP, INT, FLOAT)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
K8sLoader.add_implicit_resolver(
    INT,
    re.compile(r"""^(?:[-+]?0b[0-1_]+
                  |[-+]?0[0-7_]+
                  |[-+]?(?:0|[1-9][0-9_]*)
                  |[-+]?0x[0-9a-fA-F_]+)$""", re.X),
    list("-+0123456789"))
K8sLoader.add_implicit_resolver(
    FLOAT,
    re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                  |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
                  |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
                  |[-+]?\.(?:inf|Inf|INF)
                  |\.(?:nan|NaN|NAN))$""", re.X),
    list("-+0123456789."))


def synthetic_uid(out_name, pointer):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"firstwork-fixture/{out_name}/{pointer}"))


def add_uids(doc, out_name, added):
    """Adds metadata.uid to the document (and to each item of a List) when it is missing."""
    def fix(obj, pointer):
        if not isinstance(obj, dict):
            return
        meta = obj.get("metadata")
        if isinstance(meta, dict) and "name" in meta and "uid" not in meta:
            meta["uid"] = synthetic_uid(out_name, pointer)
            added.append(f"{out_name} {pointer or '/'} ({meta['name']})")

    fix(doc, "")
    if isinstance(doc, dict) and isinstance(doc.get("items"), list):
        for i, item in enumerate(doc["items"]):
            fix(item, f"/items/{i}")


def check_json_safe(value, where):
    """JSON has no datetime/bytes/set; every mapping key must be a string."""
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise SystemExit(f"{where}: non-string key {k!r}")
            check_json_safe(v, f"{where}/{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            check_json_safe(v, f"{where}/{i}")
    elif value is not None and not isinstance(value, (str, int, float, bool)):
        raise SystemExit(f"{where}: {type(value).__name__} cannot be written as JSON")


def render(doc):
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def convert(src, dst):
    """Returns {output file name: content} and the list of synthetic uids."""
    outputs, added = {}, []
    for path in sorted(src.iterdir()):
        if path.suffix in (".json", ".jsonl"):
            outputs[path.name] = path.read_text(encoding="utf-8")
        elif path.suffix in (".yaml", ".yml"):
            with path.open(encoding="utf-8") as f:
                docs = [d for d in yaml.load_all(f, Loader=K8sLoader) if d is not None]
            for n, doc in enumerate(docs, start=1):
                name = f"{path.stem}.json" if len(docs) == 1 else f"{path.stem}-{n}.json"
                check_json_safe(doc, name)
                add_uids(doc, name, added)
                outputs[name] = render(doc)
    return outputs, added


def main():
    repo = pathlib.Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", type=pathlib.Path, default=repo.parent / "shared" / "fixtures" / "k8s")
    ap.add_argument("--dst", type=pathlib.Path, default=repo / "tests" / "fixtures" / "k8s")
    ap.add_argument("--check", action="store_true", help="report drift, write nothing")
    args = ap.parse_args()

    outputs, added = convert(args.src, args.dst)
    drift = [n for n, text in outputs.items()
             if not (args.dst / n).exists() or (args.dst / n).read_text(encoding="utf-8") != text]
    if args.check:
        for n in drift:
            print(f"out of date: {n}")
        return 1 if drift else 0
    args.dst.mkdir(parents=True, exist_ok=True)
    for n in drift:
        (args.dst / n).write_text(outputs[n], encoding="utf-8")
    print(f"{len(outputs)} fixture files, {len(drift)} written to {args.dst}")
    for line in added:
        print(f"synthetic uid: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
