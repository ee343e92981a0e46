#!/usr/bin/env python3
"""Writes the seed inputs of every fuzz target into <outdir>/<target>/ (scripts/fuzz.sh uses them
to grow fuzz/corpus/<target>/; CI never runs this).

Sources: tests/fixtures/k8s (the API objects in wire form, derived from ../shared/fixtures/k8s),
the kubeconfig YAML of ../shared/fixtures/k8s, config/, config/scenarios/, and the raw-string
literals (R"(...)") of the unit tests of each parser.
"""
import hashlib
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "k8s"
SHARED = ROOT.parent / "shared" / "fixtures" / "k8s"

# Index = model::Kind (include/firstwork/model/object.hpp); the watch_stream target reads it from
# its first byte.
KINDS = ["Workload", "MultiKueueCluster", "ClusterQueue", "AdmissionCheck", "MultiKueueConfig",
         "Pod", "ResourceClaim", "ResourceSlice", "Node"]
RAW = re.compile(r'R"([^()\s]{0,16})\((.*?)\)\1"', re.S)


def raw_strings(*test_files):
    for f in test_files:
        for m in RAW.finditer((ROOT / f).read_text()):
            yield m.group(2)


def write(outdir, target, data):
    if isinstance(data, str):
        data = data.encode()
    if not data:
        return
    d = outdir / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def watch_line(kind, obj):
    return json.dumps({"type": kind, "object": obj}, separators=(",", ":"))


def main():
    outdir = pathlib.Path(sys.argv[1])
    objects = []  # (kind index, object) for every object of a watched kind
    for f in sorted(FIXTURES.glob("*.json")):
        text = f.read_text()
        write(outdir, "object_decoders", text)
        doc = json.loads(text)
        if isinstance(doc, list):
            items = doc
        elif doc.get("kind", "").endswith("List"):
            items = doc.get("items", [])
        else:
            items = [doc]
        for item in items:
            if isinstance(item, dict) and item.get("kind") in KINDS:
                objects.append((KINDS.index(item["kind"]), item))
        for ts in set(re.findall(r'"(\d{4}-\d\d-\d\dT[^"]{8,40})"', text)):
            write(outdir, "rfc3339", ts)
        for q in set(re.findall(r'"(\+?\d[\d.]*(?:[eE][-+]?\d+|[a-zA-Z]{1,2})?)"', text)):
            write(outdir, "quantity", q)
    for q in ["0", "1.5", "100m", "1e-3", "1E6", "7Ei", "9e18", ".5", "5.", "1Ti", "2P", "3u", "4n"]:
        write(outdir, "quantity", q)
    for ts in ["2024-02-29T23:59:60.999999999+23:59", "1679-01-01T00:00:00Z",
               "2261-12-31T23:59:59-23:59", "1970-01-01t00:00:00.5z", "2026-05-01 10:00:00Z"]:
        write(outdir, "rfc3339", ts)

    # Watch streams: the recorded ones, then per object the events a reflector sees for it.
    for f in sorted(FIXTURES.glob("*.jsonl")):
        kind = KINDS.index("Pod") if "pods" in f.name else KINDS.index("Workload")
        write(outdir, "watch_stream", bytes([kind, 3]) + f.read_bytes())
    for i, (kind, obj) in enumerate(objects):
        rv = obj.get("metadata", {}).get("resourceVersion", "1")
        bookmark = {"kind": KINDS[kind], "metadata": {"resourceVersion": rv,
                    "annotations": {"k8s.io/initial-events-end": "true"}}}
        gone = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410,
                "reason": "Expired", "message": "too old resource version"}
        lines = [watch_line("ADDED", obj), watch_line("MODIFIED", obj), watch_line("BOOKMARK", bookmark),
                 watch_line("DELETED", obj), watch_line("ERROR", gone)]
        # Byte 1: line limit 1.5 MiB (bits 0-1 = 3) and a varying chunking (bits 2-7).
        write(outdir, "watch_stream", bytes([kind, 3 | ((i % 64) << 2)]) + "\r\n".join(lines).encode() + b"\n")

    for f in sorted(SHARED.glob("kubeconfig-*.yaml")):
        write(outdir, "kubeconfig", f.read_text())
    for s in raw_strings("tests/unit/kube/kubeconfig_test.cpp"):
        if "clusters" in s or "contexts" in s or "users" in s:
            write(outdir, "kubeconfig", s)

    write(outdir, "config", (ROOT / "config" / "firstwork.example.yaml").read_text())
    for s in raw_strings("tests/unit/config/config_test.cpp"):
        write(outdir, "config", s)

    for f in sorted((ROOT / "config" / "scenarios").glob("*.yaml")):
        write(outdir, "scenario", f.read_text())
    for s in raw_strings("tests/unit/scenario/scenario_loader_test.cpp",
                         "tests/unit/scenario/scenario_expansion_test.cpp"):
        write(outdir, "scenario", s)

    for s in raw_strings("tests/unit/signals/promql_test.cpp",
                         "tests/unit/signals/useful_work_probe_test.cpp"):
        if '"status"' in s:
            write(outdir, "promql", s)


if __name__ == "__main__":
    main()
