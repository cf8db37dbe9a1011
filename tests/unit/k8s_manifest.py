#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The shipped Kubernetes manifests against the API's own models (Debian's
python3-kubernetes): required fields and types as the client checks them,
and, which the client does not, every key one its model knows and every
plain value of its type, so that a misspelt field fails here rather than
being dropped by the API server.
Usage: k8s_manifest.py MANIFEST...  Exits 77 without python3-kubernetes."""
import re
import sys

try:
    import yaml
    from kubernetes.client import ApiClient, models
except ImportError:
    print("skip: no python3-kubernetes or python3-yaml")
    sys.exit(77)


PRIMITIVES = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,)}


def unknown_keys(data, type_name, where):
    """Keys of data that the model type_name has no field for, and values
    of the wrong primitive type, by path."""
    if type_name in PRIMITIVES:
        return [] if isinstance(data, PRIMITIVES[type_name]) else \
            ["%s (%s, not %s)" % (where, type(data).__name__, type_name)]
    m = re.match(r"list\[(.*)\]$", type_name)
    if m:
        return [p for i, item in enumerate(data or [])
                for p in unknown_keys(item, m.group(1), "%s[%d]" % (where, i))]
    m = re.match(r"dict\(([^,]*), (.*)\)$", type_name)
    if m:
        return [p for k, v in (data or {}).items()
                for p in unknown_keys(v, m.group(2), "%s.%s" % (where, k))]
    model = getattr(models, type_name, None)
    if model is None or not isinstance(data, dict):
        return []
    by_key = {key: attr for attr, key in model.attribute_map.items()}
    found = []
    for key, value in data.items():
        if key not in by_key:
            found.append("%s.%s" % (where, key))
        else:
            found += unknown_keys(value, model.openapi_types[by_key[key]],
                                  "%s.%s" % (where, key))
    return found


def check(path):
    api = ApiClient()
    problems = []
    for doc in yaml.safe_load_all(open(path)):
        if not doc:
            continue
        type_name = "V1" + doc.get("kind", "")
        if doc.get("apiVersion") != "v1" or not hasattr(models, type_name):
            problems.append("%s: no v1 model for kind %r" % (path, doc.get("kind")))
            continue
        try:
            api._ApiClient__deserialize(doc, type_name)
        except (ValueError, TypeError) as e:
            problems.append("%s: %s" % (path, e))
        problems += ["%s: unknown field or wrong type: %s" % (path, p)
                     for p in unknown_keys(doc, type_name, doc["kind"])]
    return problems


def main():
    problems = [p for path in sys.argv[1:] for p in check(path)]
    # The checker itself: a manifest with a misspelt key and one without a
    # required field must fail.
    api = ApiClient()
    bad = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
           "spec": {"containers": [{"name": "c", "volumeMount": []}]}}
    if not unknown_keys(bad, "V1Pod", "Pod"):
        problems.append("the checker let a misspelt key through")
    bad["spec"]["containers"][0] = {"name": "c", "volumeMounts": [{"name": "v"}]}
    try:
        api._ApiClient__deserialize(bad, "V1Pod")
        problems.append("the checker let a missing mountPath through")
    except ValueError:
        pass
    for p in problems:
        print("FAIL - " + p)
    print("%d manifests, %d problems" % (len(sys.argv) - 1, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
