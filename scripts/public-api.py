#!/usr/bin/env python3
"""The public API of each published library crate, one item per line, from rustdoc's JSON output.

    python3 scripts/public-api.py [CRATE...]           # print the lists
    python3 scripts/public-api.py --write [CRATE...]   # rewrite the committed lists
    python3 scripts/public-api.py --check [CRATE...]   # exit 1 (with a diff) when one differs

CRATE: a package name of `CRATES` below (all of them by default). Each list is what a user of
the crate can name with the features the command line builds (`rig` is left out: its crate
needs a newer rustc): every public module, type, field, variant, function and method with its
signature, constant and trait implementation (derived and auto traits left out), reached from
the crate root through public paths. Items marked `#[doc(hidden)]` are not part of it.
`.ci/run` checks them, so that a change of a public surface is always a deliberate change of
its list in the same commit.

rustdoc's JSON output is unstable; stable rustc emits it with RUSTC_BOOTSTRAP=1, and this script
reads the format version of the toolchain the repository builds with.
"""
import difflib
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# package -> (its features, its list, relative to the repository)
CRATES = {
    "mcp-resilient": ("otel,config-files", "public-api.txt"),
    "mcp-resilient-gateway": ("serve,redis,otel", "gateway/public-api.txt"),
    "mcp-mock-server": ("", "mock-server/public-api.txt"),
}


def build(package, features):
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    subprocess.run(
        ["cargo", "rustdoc", "-q", "-p", package, "--lib", "--features", features,
         "--", "-Z", "unstable-options", "--output-format", "json"],
        cwd=ROOT, env=env, check=True)
    with open(os.path.join(target, "doc", package.replace("-", "_") + ".json")) as f:
        return json.load(f)


class Api:
    def __init__(self, doc):
        self.index = doc["index"]
        self.paths = doc["paths"]
        self.root = doc["root"]
        self.lines = set()
        self.seen = set()
        # Item id -> the shortest public path it is reachable by (the first pass fills it).
        self.public = {}

    def item(self, id_):
        return self.index.get(str(id_))

    # Types ---------------------------------------------------------------------------------

    def path_of(self, id_, written):
        if id_ in self.public:
            return self.public[id_]
        p = self.paths.get(str(id_))
        return "::".join(p["path"]) if p else written

    def args(self, args):
        if not args:
            return ""
        if "angle_bracketed" in args:
            parts = []
            for a in args["angle_bracketed"]["args"]:
                if "type" in a:
                    parts.append(self.ty(a["type"]))
                elif "lifetime" in a:
                    parts.append(a["lifetime"])
                elif "const" in a:
                    parts.append(str(a["const"].get("expr", "_")))
                else:
                    parts.append("_")
            for c in args["angle_bracketed"].get("constraints", []):
                binding = c.get("binding", {})
                if "equality" in binding:
                    eq = binding["equality"]
                    value = self.ty(eq["type"]) if "type" in eq else str(eq)
                    parts.append(f"{c['name']} = {value}")
                else:
                    parts.append(f"{c['name']}: " + " + ".join(self.bound(b) for b in binding.get("constraint", [])))
            return "<" + ", ".join(parts) + ">" if parts else ""
        if "parenthesized" in args:
            p = args["parenthesized"]
            out = "(" + ", ".join(self.ty(t) for t in p["inputs"]) + ")"
            if p.get("output"):
                out += " -> " + self.ty(p["output"])
            return out
        return ""

    def bound(self, b):
        if "trait_bound" in b:
            t = b["trait_bound"]["trait"]
            return self.path_of(t["id"], t["path"]) + self.args(t.get("args"))
        if "outlives" in b:
            return b["outlives"]
        if "use" in b:
            return "use<..>"
        return "?"

    def ty(self, t):
        if t is None:
            return "()"
        if "resolved_path" in t:
            r = t["resolved_path"]
            return self.path_of(r["id"], r["path"]) + self.args(r.get("args"))
        if "generic" in t:
            return t["generic"]
        if "primitive" in t:
            return t["primitive"]
        if "borrowed_ref" in t:
            r = t["borrowed_ref"]
            life = (r["lifetime"] + " ") if r.get("lifetime") else ""
            return "&" + life + ("mut " if r["is_mutable"] else "") + self.ty(r["type"])
        if "tuple" in t:
            return "(" + ", ".join(self.ty(x) for x in t["tuple"]) + ")"
        if "slice" in t:
            return "[" + self.ty(t["slice"]) + "]"
        if "array" in t:
            return "[" + self.ty(t["array"]["type"]) + "; " + t["array"]["len"] + "]"
        if "impl_trait" in t:
            return "impl " + " + ".join(self.bound(b) for b in t["impl_trait"])
        if "dyn_trait" in t:
            return "dyn " + " + ".join(
                self.path_of(x["trait"]["id"], x["trait"]["path"]) + self.args(x["trait"].get("args"))
                for x in t["dyn_trait"]["traits"])
        if "qualified_path" in t:
            q = t["qualified_path"]
            trait = q.get("trait")
            base = self.ty(q["self_type"])
            if trait:
                return f"<{base} as {self.path_of(trait['id'], trait['path'])}>::{q['name']}"
            return f"{base}::{q['name']}"
        if "raw_pointer" in t:
            r = t["raw_pointer"]
            return ("*mut " if r["is_mutable"] else "*const ") + self.ty(r["type"])
        if "function_pointer" in t:
            f = t["function_pointer"]
            return "fn(" + ", ".join(self.ty(x[1]) for x in f["sig"]["inputs"]) + ")" + (
                " -> " + self.ty(f["sig"]["output"]) if f["sig"].get("output") else "")
        if "infer" in t:
            return "_"
        return json.dumps(t)

    def generics(self, g):
        params = []
        for p in g.get("params", []):
            kind = p["kind"]
            if "lifetime" in kind:
                params.append(p["name"])
            elif "type" in kind:
                if kind["type"].get("is_synthetic"):
                    continue
                bounds = kind["type"].get("bounds", [])
                params.append(p["name"] + (": " + " + ".join(self.bound(b) for b in bounds) if bounds else ""))
            elif "const" in kind:
                params.append("const " + p["name"] + ": " + self.ty(kind["const"]["type"]))
        return "<" + ", ".join(params) + ">" if params else ""

    def sig(self, name, f):
        s = f["sig"]
        head = f["header"]
        quals = ("const " if head["is_const"] else "") + ("async " if head["is_async"] else "") + (
            "unsafe " if head["is_unsafe"] else "")
        inputs = []
        for arg_name, arg_ty in s["inputs"]:
            if arg_name == "self":
                rendered = self.ty(arg_ty)
                inputs.append({"Self": "self", "&Self": "&self", "&mut Self": "&mut self"}.get(rendered, "self: " + rendered))
            else:
                inputs.append(f"{arg_name}: {self.ty(arg_ty)}")
        out = f"{quals}fn {name}{self.generics(f['generics'])}(" + ", ".join(inputs) + ")"
        if s.get("output"):
            out += " -> " + self.ty(s["output"])
        return out

    # Items ---------------------------------------------------------------------------------

    def add(self, line):
        self.lines.add(line)

    def walk_module(self, id_, path):
        if (id_, path) in self.seen:
            return
        self.seen.add((id_, path))
        module = self.item(id_)
        for child in module["inner"]["module"]["items"]:
            self.walk(child, path)

    def walk(self, id_, path, name=None):
        it = self.item(id_)
        if it is None or it["visibility"] != "public":
            return
        inner = it["inner"]
        kind = next(iter(inner))
        name = name or it["name"]
        full = f"{path}::{name}" if name else path
        if kind != "use" and (id_ not in self.public or len(full) < len(self.public[id_])):
            self.public[id_] = full
        if kind == "use":
            use = inner["use"]
            if use["id"] is None:
                return
            target = self.item(use["id"])
            if target is None:
                return
            if use["is_glob"]:
                if "module" in target["inner"]:
                    for child in target["inner"]["module"]["items"]:
                        self.walk(child, path)
                return
            self.walk(use["id"], path, use["name"])
        elif kind == "module":
            self.add(f"pub mod {full}")
            self.walk_module(id_, full)
        elif kind == "struct":
            s = inner["struct"]
            self.add(f"pub struct {full}{self.generics(s['generics'])}")
            sk = s["kind"]
            if "plain" in sk:
                for field in sk["plain"]["fields"]:
                    fi = self.item(field)
                    if fi and fi["visibility"] == "public":
                        self.add(f"pub {full}::{fi['name']}: {self.ty(fi['inner']['struct_field'])}")
                if sk["plain"].get("has_stripped_fields"):
                    pass
            elif "tuple" in sk:
                for n, field in enumerate(sk["tuple"]):
                    fi = self.item(field) if field is not None else None
                    if fi and fi["visibility"] == "public":
                        self.add(f"pub {full}::{n}: {self.ty(fi['inner']['struct_field'])}")
            self.impls(s["impls"], full)
        elif kind == "enum":
            e = inner["enum"]
            self.add(f"pub enum {full}{self.generics(e['generics'])}")
            for v in e["variants"]:
                vi = self.item(v)
                vk = vi["inner"]["variant"]["kind"]
                if vk == "plain":
                    self.add(f"pub {full}::{vi['name']}")
                elif "tuple" in vk:
                    fields = [self.ty(self.item(f)["inner"]["struct_field"]) for f in vk["tuple"] if f is not None]
                    self.add(f"pub {full}::{vi['name']}(" + ", ".join(fields) + ")")
                elif "struct" in vk:
                    self.add(f"pub {full}::{vi['name']}")
                    for f in vk["struct"]["fields"]:
                        fi = self.item(f)
                        self.add(f"pub {full}::{vi['name']}::{fi['name']}: {self.ty(fi['inner']['struct_field'])}")
            self.impls(e["impls"], full)
        elif kind == "function":
            self.add(f"pub {self.sig(full, inner['function'])}")
        elif kind == "trait":
            t = inner["trait"]
            self.add(f"pub trait {full}{self.generics(t['generics'])}")
            for m in t["items"]:
                mi = self.item(m)
                if mi and "function" in mi["inner"]:
                    self.add(f"pub {self.sig(full + '::' + mi['name'], mi['inner']['function'])}")
                elif mi and "assoc_type" in mi["inner"]:
                    self.add(f"pub type {full}::{mi['name']}")
        elif kind == "constant":
            self.add(f"pub const {full}: {self.ty(inner['constant']['type'])}")
        elif kind == "static":
            self.add(f"pub static {full}: {self.ty(inner['static']['type'])}")
        elif kind == "type_alias":
            self.add(f"pub type {full} = {self.ty(inner['type_alias']['type'])}")
        elif kind == "macro":
            self.add(f"pub macro {full}!")
        else:
            self.add(f"pub {kind} {full}")

    def impls(self, impls, full):
        for i in impls:
            imp = self.item(i)
            if imp is None:
                continue
            data = imp["inner"]["impl"]
            if data.get("is_synthetic") or data.get("blanket_impl") is not None:
                continue
            trait = data.get("trait")
            if trait is None:
                for m in data["items"]:
                    mi = self.item(m)
                    if mi is None or mi["visibility"] != "public":
                        continue
                    if "function" in mi["inner"]:
                        self.add(f"pub {self.sig(full + '::' + mi['name'], mi['inner']['function'])}")
                    elif "constant" in mi["inner"]:
                        self.add(f"pub const {full}::{mi['name']}: {self.ty(mi['inner']['constant']['type'])}")
            else:
                if "automatically_derived" in imp.get("attrs", []):
                    continue
                tname = self.path_of(trait["id"], trait["path"]) + self.args(trait.get("args"))
                self.add(f"impl {tname} for {full}")


def render(package, features):
    doc = build(package, features)
    api = Api(doc)
    for _ in range(2):  # the first pass learns each item's public path, the second renders
        api.lines, api.seen = set(), set()
        api.walk_module(api.root, package.replace("-", "_"))
    return sorted(api.lines)


def one(package, mode):
    """Prints, writes or checks one crate's list; False when the check fails."""
    features, rel = CRATES[package]
    lines = render(package, features)
    text = "".join(line + "\n" for line in lines)
    path = os.path.join(ROOT, rel)
    if mode == "--write":
        with open(path, "w") as f:
            f.write(text)
        print(f"{len(lines)} public items of {package} written to {rel}")
    elif mode == "--check":
        try:
            with open(path) as f:
                old = f.read()
        except FileNotFoundError:
            old = ""
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), text.splitlines(True), rel, "the code"))
            print(f"the public API of {package} changed: if that is meant, run"
                  f" `python3 scripts/public-api.py --write {package}` and commit {rel}",
                  file=sys.stderr)
            return False
        print(f"{rel} matches the code ({len(lines)} items)")
    else:
        sys.stdout.write(text)
    return True


def main():
    mode = next((a for a in sys.argv[1:] if a in ("--write", "--check")), None)
    packages = [a for a in sys.argv[1:] if not a.startswith("--")] or list(CRATES)
    unknown = [p for p in packages if p not in CRATES]
    if unknown:
        sys.exit(f"not a published library crate: {', '.join(unknown)} (known: {', '.join(CRATES)})")
    ok = [one(p, mode) for p in packages]
    sys.exit(0 if all(ok) else 1)


if __name__ == "__main__":
    main()
