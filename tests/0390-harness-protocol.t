#!/bin/sh
# The protocol between geak-eval and its harness is named once, in
# share/harness/protocol.tsv: the files generated from it are current, the
# C side (lib/eval, bin/geak-eval.c) uses exactly the names the table gives
# to geak-eval, the Python side (share/harness) exactly those it gives to
# the harness, and neither spells a protocol key as a raw string.
. "$(dirname "$0")/lib.sh"
py=$GEAK_PYTHON
[ -x "$py" ] || py=$(command -v python3) || skip_all "no Python"
plan 9

gen() {
	awk -v out="$1" -f "$top/share/harness/protogen.awk" "$top/share/harness/protocol.tsv" $2
}
gen c > harness.h && gen py > proto.py && gen man "$top/share/man/geak-harness.7" > page.7
check "lib/eval/harness.h is generated from the table as it is now" cmp harness.h "$top/lib/eval/harness.h"
check "geakh/proto.py is generated from the table as it is now" cmp proto.py "$top/share/harness/geakh/proto.py"
check "geak-harness(7)'s names are generated from the table as they are now" \
	cmp page.7 "$top/share/man/geak-harness.7"

# A table with a row of the wrong shape is refused, not half-generated.
printf 'OP_X\tx\top\n' > bad.tsv
check_fail "a row of three fields is refused" awk -v out=c -f "$top/share/harness/protogen.awk" bad.tsv

"$py" - "$top" > contract.txt 2> contract.err <<'EOPY'
import ast, glob, os, re, sys

top = sys.argv[1]
rows = {}
with open(os.path.join(top, "share/harness/protocol.tsv")) as fp:
    for line in fp:
        if line.startswith("#") or not line.strip():
            continue
        name, key, _type, _unit, writer, reader, _meaning = line.rstrip("\n").split("\t")
        rows[name] = (key, set(writer.split(",")) | set(reader.split(",")))
prefixes = {n.split("_")[0] for n in rows}


def side(who):
    return {n for n, (_, sides) in rows.items() if who in sides or "both" in sides}


def strip_c(text):
    """C source without its comments, string literals kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            out.append("\n" * text.count("\n", i, j))
            i = j + 2
        elif text.startswith("//", i):
            i = text.find("\n", i)
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while text[j] != q:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


# C: every GEAK_<prefix>_ name used, and raw keys where a protocol object
# is read or written (jansson's accessors on the names that hold one).
c_files = sorted(glob.glob(os.path.join(top, "lib/eval/*.[ch]")) + [os.path.join(top, "bin/geak-eval.c")])
c_files = [f for f in c_files if not f.endswith("/harness.h")]
holders = r"(?:resp|msg|said|prof|profile|p->profile|p->refspec|refspec|timing|found|hello|run->hello|req|" \
          r"plan|kp|t|spec|jobspec|ref|v|f|c|counts|build|res|need|start|ev->sandbox_more)"
access = re.compile(r"\b(?:json_object_get|json_object_set_new|json_object_set|json_object_del|"
                    r"geak_get_str|geak_get)\(\s*" + holders + r"\s*,\s*\"([^\"]*)\"")
keys = {k for k, _ in rows.values()}
c_used, c_raw = set(), []
for f in c_files:
    text = strip_c(open(f).read())
    for m in re.finditer(r"\bGEAK_([A-Z][A-Z0-9_]*)\b", text):
        if m.group(1).split("_")[0] in prefixes:
            c_used.add(m.group(1))
    for m in access.finditer(text):
        if m.group(1).split(".")[0] in keys:
            c_raw.append(f"{os.path.relpath(f, top)}:{text.count(chr(10), 0, m.start()) + 1}: \"{m.group(1)}\"")
    for m in re.finditer(r"\"(GEAK_[A-Z_]+)", text):
        if m.group(1) in keys or m.group(1) == "GEAK_SANDBOX":
            c_raw.append(f"{os.path.relpath(f, top)}: \"{m.group(1)}\"")

# Python: every proto.NAME (or name imported from proto), and raw keys
# where a request, plan, job.json, greeting, settings or environment is
# read or written.
py_files = [os.path.join(top, "share/harness/geak_worker.py")] + \
    sorted(glob.glob(os.path.join(top, "share/harness/geakh/*.py")))
py_files = [f for f in py_files if not f.endswith("/proto.py")]
receivers = {"req", "plan", "spec", "want", "hello", "CONF", "environ"}


def receiver(node):
    while isinstance(node, ast.Attribute):
        if node.attr in receivers:
            return node.attr
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def raw(node):
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in keys


py_used, py_raw = set(), []
helpers = {"ProtocolError", "need"}  # proto.py's own, not the table's
for f in py_files:
    tree = ast.parse(open(f).read(), f)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "proto":
            py_used.add(node.attr)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "proto":
            py_used.update(a.name for a in node.names)
        py_used -= helpers
        hit = None
        if isinstance(node, ast.Subscript) and receiver(node.value) in receivers and raw(node.slice):
            hit = node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("get", "pop", "setdefault") and receiver(node.func.value) in receivers \
                and node.args and raw(node.args[0]):
            hit = node.args[0]
        elif isinstance(node, ast.Compare) and raw(node.left) and \
                any(isinstance(o, (ast.In, ast.NotIn)) for o in node.ops) and \
                any(receiver(c) in receivers for c in node.comparators):
            hit = node.left
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                (node.value == "GEAK_SANDBOX" or (node.value.startswith("GEAK_") and node.value in keys)):
            hit = node
        if hit is not None:
            py_raw.append(f"{os.path.relpath(f, top)}:{hit.lineno}: {hit.value!r}")


def diff(used, want):
    return " ".join(sorted(used - set(rows))) + " | " + " ".join(sorted(want - used))


print(f"c_same\t{diff(c_used, side('eval'))}")
print(f"py_same\t{diff(py_used, side('harness'))}")
print(f"c_raw\t{' '.join(c_raw)}")
print(f"py_raw\t{' '.join(py_raw)}")
print(f"# {len(rows)} names in the table: {len(side('eval'))} geak-eval's, C uses {len(c_used)}; "
      f"{len(side('harness'))} the harness's, Python uses {len(py_used)}", file=sys.stderr)
EOPY
sed 's/^/# /' contract.err
got() { sed -n "s/^$1	//p" contract.txt; }
# Each: names used but not in the table | names the table gives the side but it does not use.
check_same "the C side uses exactly geak-eval's names of the table" " | " "$(got c_same)"
check_same "the Python side uses exactly the harness's names of the table" " | " "$(got py_same)"
check_same "the C side spells no protocol key as a raw string" "" "$(got c_raw)"
check_same "the Python side spells no protocol key as a raw string" "" "$(got py_raw)"
grep -rn 'GEAK_SANDBOX\b' "$top/lib" "$top/bin" "$top/share/harness" --include=*.c --include=*.h \
	--include=*.py > sandbox-env.txt
check_same "the sandbox settings travel in the start request, not the environment" "" \
	"$(cat sandbox-env.txt)"
done_testing
