#!/bin/sh
# geak-eval --export-calibration and --import-calibration on the CPU: a
# task calibrated once, its profile exported without its outputs,
# imported into a fresh cache, where a candidate is judged with no
# calibration (the outputs made again by one run) to the same verdicts;
# archives that are altered, or come from another device or harness, are
# refused with the reason.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
"$GEAK_PYTHON" -c 'import ctypes; ctypes.CDLL("libarchive.so.13")' 2>/dev/null ||
	skip_all "no libarchive.so.13"
plan 43

check_same "geak-eval links no libarchive (it is loaded for an archive only)" 0 \
	"$(ldd "$top/bin/geak-eval" | grep -c libarchive)"
# Without libarchive (hidden in a mount namespace of its own, where
# that can be made): said before anything runs.
lib=$(ldconfig -p 2>/dev/null | awk '/libarchive\.so\.13 / { print $NF; exit }')
if [ -n "$lib" ] && unshare -m sh -c "mount --bind /dev/null $lib" 2>/dev/null; then
	for opt in export import; do
		unshare -m sh -c "mount --bind /dev/null $lib &&
			exec geak-eval --cpu --cache none --$opt-calibration x.tgz" < /dev/null > none.out 2> none.err
		check_same "--$opt-calibration without libarchive: exit 3, said how to get it" \
			"3 geak-eval: --$opt-calibration: libarchive.so.13 not found: install libarchive13" \
			"$? $(cat none.err)"
	done
else
	skip "no mount namespace here to hide libarchive in"
	skip "no mount namespace here to hide libarchive in"
fi
check_match "--help names both options" "--export-calibration FILE.*--import-calibration FILE" \
	"$(geak-eval --help | tr '\n' ' ')"

cp "$top/tests/harness/scale.py" ref.py
cp "$top/tests/harness/scale_test.py" test.py
sed 's/\* s, mask/* s * 1.005, mask/' ref.py > close.py
task() {
	jq -nc --rawfile r ref.py --rawfile t test.py --rawfile c "$1" \
		'{id: "plain/op", code: $c, task: {suite: "plain", name: "op", entry: "scale",
		  reference: $r, test: $t}}'
}
{ task ref.py; task close.py; } > in.jsonl

# verdicts FILE: each record's exec, reason and speedup.
verdicts() { jq -r '.eval | "\(.exec) \(.reason) \(.speedup)"' "$1" | tr '\n' ' '; }

geak-eval -v --cpu --cache a --static off --export-calibration calib.tgz in.jsonl > a.jsonl 2> a.err
check_same "the calibrating run exits 0" 0 $?
check_same "it calibrated the reference once" 1 "$(grep -c 'calibrate-.*: exit after' a.err)"
check_same "the verdicts: the reference passes, the 0.5% error fails" \
	"true null null false mismatch null " "$(verdicts a.jsonl)"
check_match "the export is said" "--export-calibration: calib.tgz: 1 profiles" "$(cat a.err)"
key=$(ls a/profile)
check_same "the archive holds the manifest, the spec, the profile and its masks, not its outputs" \
	"$(printf '%s\n' "$key/masks.pt" "$key/profile.json" "$key/spec.json" calibration.json | sort | tr '\n' ' ')" \
	"$(tar tzf calib.tgz | sort | tr '\n' ' ')"

geak-eval --cpu --cache b --import-calibration calib.tgz > imp.jsonl 2> imp.err
check_same "an import alone exits 0" 0 $?
check_same "and says, per profile, that it was imported" "plain/op imported $key" \
	"$(jq -r '"\(.task) \(.import) \(.key)"' imp.jsonl)"
check_same "the cache gets the profile without its outputs" "masks.pt profile.json spec.json" \
	"$(ls "b/profile/$key" | tr '\n' ' ' | sed 's/ $//')"
check_same "nothing of the import's own is left beside the profiles" "$key" "$(ls b/profile)"

geak-eval -v --cpu --cache b --static off in.jsonl > b.jsonl 2> b.err
check_same "the run on the imported profile exits 0" 0 $?
check_same "no calibration job ran" "0 0" \
	"$(grep -c 'calibrating the reference' b.err) $(grep -c 'calibrate-' b.err)"
check_same "one job made the reference's outputs again" 1 "$(grep -c 'regen-.*: exit after' b.err)"
check_same "the verdicts are those of the calibrating run" "$(verdicts a.jsonl)" "$(verdicts b.jsonl)"
check_same "speedups match within 25% (none on the CPU: both null)" yes \
	"$(jq -rs '[.[].eval.speedup] as $s | if ($s[0] == null and $s[1] == null) or
	  (($s[0] - $s[1]) | fabs) <= 0.25 * $s[0] then "yes" else "no" end' a.jsonl b.jsonl | sed -n 1p)"
check_same "the outputs are made once: profile.pt is kept" yes \
	"$([ -f "b/profile/$key/profile.pt" ] && echo yes)"

geak-eval --cpu --cache b --import-calibration calib.tgz > again.jsonl 2>/dev/null
check_same "an import over a profile of the cache's own leaves it" "present 0" \
	"$(jq -r .import again.jsonl) $?"

# ---- archives from elsewhere ----

# tamper.py IN OUT WHAT: the archive IN, changed by WHAT, as OUT.
cat > tamper.py <<'PY'
import hashlib, io, json, sys, tarfile

src, dst, what = sys.argv[1:4]
members = {}
with tarfile.open(src) as t:
    for m in t.getmembers():
        members[m.name] = t.extractfile(m).read()
key = next(n.split("/")[0] for n in members if n.endswith("/spec.json"))


def rekey(spec, extra=None):
    """A profile whose spec is spec, under the key it hashes to (a
    profile made elsewhere, not altered on the way)."""
    data = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    new = hashlib.sha256(data.encode()).hexdigest()
    for name in ("spec.json", "profile.json", "masks.pt"):
        members[f"{new}/{name}"] = members[f"{key}/{name}"]
    members[f"{new}/spec.json"] = data.encode()
    for name, value in (extra or {}).items():
        members[f"{new}/{name}"] = value


spec = json.loads(members[f"{key}/spec.json"])
prof = json.loads(members[f"{key}/profile.json"])
links = []
if what == "traversal":
    members["../evil.txt"] = b"x"
elif what == "absolute":
    members["/tmp/geak-evil.txt"] = b"x"
elif what == "link":
    links.append((f"{key}/pins.json", "/etc/passwd"))
elif what == "name":
    members[f"{key}/run.py"] = b"print(1)"
elif what == "big":
    members[f"{key}/pins.json"] = b" " * (17 << 20)
elif what == "sums":
    for fp in prof["canon_sums"]["seeds"].values():
        for v in fp.values():
            if v[0] == "tensor":
                v[3] += 1000.0
    members[f"{key}/profile.json"] = json.dumps(prof).encode()
elif what == "mixed":
    rekey(dict(spec, device=dict(spec["device"], name="NVIDIA H100 80GB HBM3")))
    rekey(dict(spec, harness="h1-0000000000000000"))
    rekey(dict(spec, name="badjson"), {"profile.json": b"{\"ok\": true,"})
    rekey(dict(spec, name="badfield"), {"profile.json": json.dumps(dict(prof, tolerance="x")).encode()})
    members[f"{key}/spec.json"] = json.dumps(dict(spec, code="import os\n")).encode()
with tarfile.open(dst, "w:gz") as t:
    for name, data in members.items():
        info = tarfile.TarInfo(name)
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    for name, target in links:
        info = tarfile.TarInfo(name)
        info.type, info.linkname = tarfile.SYMTYPE, target
        t.addfile(info)
PY
tamper() { "$GEAK_PYTHON" tamper.py calib.tgz "$1.tgz" "$1"; }

# refused NAME WHAT WHY: an archive changed by WHAT is refused whole.
refused() {
	tamper "$2"
	geak-eval --cpu --cache "c-$2" --import-calibration "$2.tgz" > /dev/null 2> "c-$2.err"
	st=$?
	check_match "$1: refused whole, with the reason, exit 3" \
		"^3 .*$2.tgz: member '.*': $3: refused, nothing imported" "$st $(cat "c-$2.err")"
	check_same "$1: nothing entered the cache" "" "$(ls "c-$2/profile" 2>/dev/null)"
}
refused "a path with .." traversal "a path that leaves the archive \\(\\.\\.\\)"
check_same "and nothing was written outside it" no "$([ -e evil.txt ] || [ -e c-traversal/evil.txt ] && echo yes || echo no)"
refused "an absolute path" absolute "an absolute path"
refused "a symbolic link" link "a link"
refused "an unexpected file name" name "not a file of a calibration archive"
refused "a member over its cap" big "larger than 16 MiB"

tamper mixed
geak-eval --cpu --cache d --import-calibration mixed.tgz > d.jsonl 2> d.err
check_same "profiles refused one by one: exit 1" 1 $?
# by KEY: the task and the state, the reason's start
line() { jq -r --arg t "$1" 'select(.task == $t and .import == "refused") | .why' d.jsonl; }
check_match "another device: refused, naming the field" \
	"^device.name differs: the archive's \"NVIDIA H100 80GB HBM3\", here \"cpu \\(Triton interpreter\\)\"" \
	"$(line plain/op | grep device)"
check_match "another harness version: refused, naming it" \
	"^harness differs: the archive's \"h1-0000000000000000\", here \"h1-" "$(line plain/op | grep harness)"
check_match "a profile that is not JSON: refused with its line" "^profile.json: line [0-9]*: " \
	"$(line plain/badjson)"
check_match "a field not as the harness writes it: refused, naming it" \
	"^profile.json: field tolerance: " "$(line plain/badfield)"
check_match "a spec altered on the way: refused" "^spec.json: its digest .* is not its folder's name .*\\(altered\\)" \
	"$(line plain/op | grep digest)"
check_match "each refusal said on stderr with the task" \
	"--import-calibration: mixed.tgz: task plain/badjson \\(profile [0-9a-f]{12}\\): refused: profile.json" \
	"$(cat d.err)"
check_same "none of them entered the cache" "" "$(ls d/profile 2>/dev/null)"

# Outputs made again that are not the calibration's (here: its recorded
# sums altered) are not used: the task is calibrated on this machine.
tamper sums
geak-eval --cpu --cache e --import-calibration sums.tgz > /dev/null 2>&1
check_same "a profile whose sums were changed imports (its spec is intact)" "$key" "$(ls e/profile)"
sed -n 1p in.jsonl > one.jsonl
geak-eval -v --cpu --cache e --static off one.jsonl > e.jsonl 2> e.err
check_match "outputs that differ from the calibration's are said" \
	"the imported profile of the reference does not hold here: seed 42: \\[.gold.\\]\\[.half.\\]: sum" "$(cat e.err)"
check_same "and the reference is calibrated here instead" 1 "$(grep -c 'calibrate-.*: exit after' e.err)"
check_same "with the same verdict" "$(sed -n 1p a.jsonl > a1.jsonl; verdicts a1.jsonl)" "$(verdicts e.jsonl)"
