"""A fake Kubernetes API server on 127.0.0.1 for tests/it/kube.rs: it records every request
(method, path with query, body) as one JSON line, and answers as much of the API as kubectl and
helm need for the calls the tests make: discovery, lists, and a small object store that POST, PUT
and PATCH write into (a PATCH returns the object as stored, with the patch kept beside it).

usage: fake_apiserver.py RECORD PORTFILE
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

RECORD, PORTFILE = sys.argv[1], sys.argv[2]
LOCK = threading.Lock()

CORE = [
    ("pods", "Pod", True, ["po"]),
    ("secrets", "Secret", True, []),
    ("configmaps", "ConfigMap", True, ["cm"]),
    ("services", "Service", True, ["svc"]),
    ("serviceaccounts", "ServiceAccount", True, ["sa"]),
    ("events", "Event", True, ["ev"]),
    ("namespaces", "Namespace", False, ["ns"]),
    ("nodes", "Node", False, ["no"]),
]
APPS = [
    ("deployments", "Deployment", True, ["deploy"]),
    ("statefulsets", "StatefulSet", True, ["sts"]),
    ("daemonsets", "DaemonSet", True, ["ds"]),
    ("replicasets", "ReplicaSet", True, ["rs"]),
]
KINDS = {plural: (kind, "v1" if (plural, kind, n, s) in CORE else "apps/v1")
         for plural, kind, n, s in CORE + APPS}


def resource_list(gv, resources):
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": gv,
        "resources": [
            {
                "name": plural,
                "singularName": kind.lower(),
                "namespaced": namespaced,
                "kind": kind,
                "shortNames": short,
                "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
            }
            for plural, kind, namespaced, short in resources
        ]
        + [
            {"name": f"{plural}/scale", "singularName": "", "namespaced": True, "group": "autoscaling",
             "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]}
            for plural, _, _, _ in resources if plural in ("deployments", "statefulsets")
        ],
    }


DISCOVERY = {
    "/version": {"major": "1", "minor": "31", "gitVersion": "v1.31.0", "platform": "linux/amd64"},
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {"name": "apps", "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
         "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}}]},
    "/api/v1": resource_list("v1", CORE),
    "/apis/apps/v1": resource_list("apps/v1", APPS),
}

STORE = {}


def seed(path, kind, api_version, name, namespace, extra=None):
    obj = {"apiVersion": api_version, "kind": kind,
           "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                        "resourceVersion": "1", "creationTimestamp": "2026-01-01T00:00:00Z", "generation": 1}}
    obj.update(extra or {})
    STORE[path] = obj


seed("/apis/apps/v1/namespaces/default/deployments/api", "Deployment", "apps/v1", "api", "default", {
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "api"}},
             "template": {"metadata": {"labels": {"app": "api"}},
                          "spec": {"containers": [{"name": "app", "image": "registry.example/api:1"}]}}},
    "status": {"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1,
               "observedGeneration": 1}})
seed("/api/v1/namespaces/default/pods/api-0", "Pod", "v1", "api-0", "default", {
    "spec": {"containers": [{"name": "app", "image": "registry.example/api:1"}], "nodeName": "node-1"},
    "status": {"phase": "Running"}})
seed("/api/v1/namespaces/default/secrets/db", "Secret", "v1", "db", "default", {
    "type": "Opaque", "data": {"password": "aHVudGVyMg=="}})


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = raw.decode("utf-8", "replace")
        with LOCK, open(RECORD, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path, "body": body}) + "\n")
        path = urlsplit(self.path).path.rstrip("/") or "/"
        method = self.command
        if method == "GET" and path in DISCOVERY:
            return self.reply(200, DISCOVERY[path])
        if method == "GET" and (path.startswith("/apis/") or path == "/openapi/v2" or path.startswith("/openapi")):
            if not path.startswith("/apis/apps/v1"):
                return self.reply(404, status(404, "NotFound", "the server could not find the requested resource"))
        parts = path.strip("/").split("/")
        # /api/v1[/namespaces/ns]/plural[/name[/sub]] or /apis/group/version/...
        base = parts[:2] if parts[0] == "api" else parts[:3]
        rest = parts[len(base):]
        if rest[:1] == ["namespaces"] and len(rest) >= 3:
            rest = rest[2:]
        plural = rest[0] if rest else ""
        kind, api_version = KINDS.get(plural, ("Unknown", "v1"))
        if method == "GET" and len(rest) == 1:
            items = [o for p, o in STORE.items() if p.startswith(path + "/") and p.count("/") == path.count("/") + 1]
            query = dict(q.split("=", 1) for q in urlsplit(self.path).query.split("&") if "=" in q)
            selector = unquote(query.get("labelSelector", ""))
            for term in filter(None, selector.split(",")):
                k, _, v = term.partition("=")
                items = [o for o in items if o.get("metadata", {}).get("labels", {}).get(k) == v]
            return self.reply(200, {"kind": kind + "List", "apiVersion": api_version,
                                    "metadata": {"resourceVersion": "1"}, "items": items})
        if method == "GET":
            if path in STORE:
                return self.reply(200, STORE[path])
            return self.reply(404, status(404, "NotFound", f'{plural} "{rest[-1] if rest else ""}" not found'))
        if method == "POST":
            try:
                obj = json.loads(body or "{}")
            except ValueError:
                obj = {}
            meta = obj.setdefault("metadata", {})
            meta.setdefault("resourceVersion", "1")
            meta.setdefault("uid", "uid-new")
            meta.setdefault("creationTimestamp", "2026-01-01T00:00:00Z")
            if meta.get("name"):
                STORE[path + "/" + meta["name"]] = obj
            return self.reply(201, obj)
        if method == "PUT":
            try:
                obj = json.loads(body or "{}")
            except ValueError:
                obj = {}
            STORE[path] = obj
            return self.reply(200, obj)
        if method == "PATCH":
            target = path.rsplit("/scale", 1)[0] if path.endswith("/scale") else path
            if target not in STORE:
                return self.reply(404, status(404, "NotFound", f'{plural} not found'))
            if path.endswith("/scale"):
                return self.reply(200, {"kind": "Scale", "apiVersion": "autoscaling/v1",
                                        "metadata": STORE[target]["metadata"],
                                        "spec": {"replicas": 3}, "status": {"replicas": 1}})
            return self.reply(200, STORE[target])
        if method == "DELETE":
            STORE.pop(path, None)
            return self.reply(200, {"kind": "Status", "apiVersion": "v1", "status": "Success", "metadata": {}})
        return self.reply(405, status(405, "MethodNotAllowed", method))

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(PORTFILE + ".tmp", PORTFILE)
server.serve_forever()
