#!/bin/sh
# geak-retrieve: corpora in every form, the index file, the query modes,
# the leakage guard, and the shipped default corpus.
. "$(dirname "$0")/lib.sh"
plan 49

# JSON text holds backslashes, which some shells' echo would interpret.
say() { printf '%s\n' "$1"; }

mkdir -p k/a k/b k/.hidden
cat > k/a/softmax_k.py <<'EOF'
import triton
import triton.language as tl


def helper(x):
    return softmax_kernel


# Row-wise softmax of a matrix.
# -----------------------------
# type: ignore
@triton.autotune(configs=[triton.Config({}, num_warps=4)], key=["N"])
@triton.jit
def softmax_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(y_ptr + row * N + cols, num / tl.sum(num, axis=0), mask=cols < N)


def softmax(x, y):
    """Launch one program per row."""
    softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=1024)
    return y
EOF
cat > k/b/vec.py <<'EOF'
import triton
import triton.language as tl


class Ops:
    @staticmethod
    def add(x, y, out):
        n = out.numel()
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)


@triton.jit(do_not_specialize=["n"])
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Element-wise vector addition."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + tl.load(y_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def add_kernel(x_ptr, out_ptr):
    tl.store(out_ptr, tl.load(x_ptr))
EOF
echo 'garbage' > k/b/notes.txt
cp k/b/vec.py k/.hidden/

geak-retrieve -l -c k > dir.jsonl
check_same "directory: every kernel, sorted by path, hidden skipped" \
	'["a/softmax_k.py:softmax_kernel","b/vec.py:add_kernel","b/vec.py:add_kernel#2"]' \
	"$(jq -sc 'map(.id)' dir.jsonl)"
check_same "description from the comment block, noise lines dropped" \
	'"Row-wise softmax of a matrix."' "$(jq -sc '.[0].description' dir.jsonl)"
check_same "description from the docstring" '"Element-wise vector addition."' \
	"$(jq -sc '.[1].description' dir.jsonl)"
code=$(jq -sr '.[0].code' dir.jsonl)
check_match "code starts with the stacked decorators" '^@triton.autotune' "$code"
check_match "the launching wrapper follows after two blank lines" \
	"$(printf 'mask=cols < N\\)\n\n\ndef softmax\\(x, y\\):')" "$(printf '%s' "$code" | tr '\n' '\001' | tr '\001' '\n')"
case $code in *"def helper"*) not_ok "a mere reference loses to a launch" ;; *) ok "a mere reference loses to a launch" ;; esac
check_match "a method wrapper comes out dedented" '^def add\(x, y, out\):' \
	"$(jq -sr '.[1].code' dir.jsonl | sed -n '/^def add/p')"

tar -czf k.tar.gz -C k a b
geak-retrieve -l -c k.tar.gz > tar.jsonl
check_same "tar.gz read in place gives the same entries" \
	"$(jq -c '[.id, .description, .code]' dir.jsonl)" "$(jq -c '[.id, .description, .code]' tar.jsonl)"
check_same "the source is the corpus named" '"k.tar.gz"' "$(jq -sc '.[0].source' tar.jsonl)"
if (cd k && zip -qr ../k.zip a b) 2>/dev/null || (cd k && python3 -m zipfile -c ../k.zip a b) 2>/dev/null; then
	geak-retrieve -l -c k.zip > zip.jsonl
	check_same "zip gives the same entries" \
		"$(jq -c '[.id, .code]' dir.jsonl)" "$(jq -c '[.id, .code]' zip.jsonl)"
else
	skip "no zip tool"
fi

# train_crawl.json's form, and JSON Lines.
jq -s 'map({code, description_1: .description})' dir.jsonl > crawl.json
geak-retrieve -l -c crawl.json > crawl.out
check_same "JSON array: ids by position, description_1 used" \
	'[["crawl.json:0","Row-wise softmax of a matrix."],["crawl.json:2",""]]' \
	"$(jq -sc 'map([.id, .description]) | [.[0], .[2]]' crawl.out)"
jq -c '{id: ("x/" + .id), description, code, extra: 1}' dir.jsonl > lines.jsonl
check_same "JSON Lines: ids kept" '"x/b/vec.py:add_kernel"' "$(geak-retrieve -l -c lines.jsonl | jq -sc '.[1].id')"
printf '{"id":"ok","code":"x"}\n{"id":"bad"}\n' > bad.jsonl
geak-retrieve -l -c bad.jsonl >/dev/null 2>err
check_same "a corpus line without code is fatal" 3 $?
check_match "and named by file and line" 'bad.jsonl:2: field .code.' "$(cat err)"
echo 'hello' > plain.txt
check_fail "text that is no corpus is refused" geak-retrieve -l -c plain.txt

# Records.
instr='{"id":"t/1","task":{"instruction":"Compute the softmax of every row"}}'
out=$(say "$instr" | geak-retrieve -c k)
check_same "instruction mode finds the softmax" \
	'["a/softmax_k.py:softmax_kernel","instruction",null]' \
	"$(say "$out" | jq -c '.oneshot | [.id, .mode, .excluded]')"
check_match "the example's code comes along" 'def softmax_kernel' "$(say "$out" | jq -r .oneshot.code)"
check_same "score and source" 'true k' "$(say "$out" | jq -r '"\(.oneshot.score > 0) \(.oneshot.source)"')"
out=$(echo '{"task":{"instruction":"Compute the softmax"},"code":"z = tl.load(x_ptr + offs) + tl.load(y_ptr + offs)"}' | geak-retrieve -c k)
check_same "a record with a candidate is searched by code" '["b/vec.py:add_kernel","code"]' \
	"$(say "$out" | jq -c '.oneshot | [.id, .mode]')"
out=$(echo '{"task":{"instruction":"Compute the softmax"},"code":"z = tl.load(x_ptr + offs)"}' | geak-retrieve -c k -m instruction)
check_same "-m instruction overrides" '"instruction"' "$(say "$out" | jq -c .oneshot.mode)"
out=$(echo '{"task":{"instruction":"a softmax kernel"}}' | geak-retrieve -c k --top 3)
check_same "--top 3: 'oneshots', best first, the best also as 'oneshot'" \
	'[3,true,true]' "$(say "$out" | jq -c '[(.oneshots|length), (.oneshots[0].id == .oneshot.id), (.oneshots[0].score >= .oneshots[1].score)]')"
out=$(say "$out" | geak-retrieve -c k --top 1)
check_same "--top 1 drops a stale 'oneshots'" 'false' "$(say "$out" | jq -c 'has("oneshots")')"
out=$(echo '{"task":{"instruction":"zzz qqq"}}' | geak-retrieve -c k)
check_same "nothing in common: oneshot is null" 'null' "$(say "$out" | jq -c .oneshot)"

printf '%s\n' '{"id":"t/2","task":{}}' "$instr" > recs.jsonl
geak-retrieve -c k recs.jsonl > out.jsonl 2>err
check_same "a record without an instruction: exit 1" 1 $?
check_same "one line out per line in, the bad one with an error" '["bad_field",null]' \
	"$(jq -sc 'map(.error.kind)' out.jsonl)"
check_match "the warning names file, line and field" 'recs.jsonl:1: field .task.instruction.' "$(cat err)"
echo '{"id":"t/3","error":{"tool":"x","stage":"y","kind":"z","message":"m"},"task":{"instruction":"softmax"}}' > e.jsonl
check_same "a record with an error passes untouched" "$(cat e.jsonl)" "$(geak-retrieve -c k e.jsonl)"

# Leakage guard: the task's reference is the corpus kernel itself.
ref=$(jq -sr '.[0].code' dir.jsonl)
rec=$(jq -nc --arg r "$ref" '{task: {instruction: "a softmax kernel", reference: $r}}')
out=$(say "$rec" | geak-retrieve -c k -x)
check_same "the guard drops the reference's own kernel" '[1,["a/softmax_k.py:softmax_kernel"],false]' \
	"$(say "$out" | jq -c '.oneshot | [.excluded, .excluded_ids, .id == "a/softmax_k.py:softmax_kernel"]')"
out=$(say "$rec" | geak-retrieve -c k -G)
check_same "-G keeps it" '["a/softmax_k.py:softmax_kernel",null]' "$(say "$out" | jq -c '.oneshot | [.id, .excluded]')"
# A docstring, a comment and one more statement: a near copy.
near=$(printf '%s' "$ref" | sed 's/^    row = /    """Doc."""\n    # the row\n    row = /; s/^    num = tl.exp(x)/&\n    tl.debug_barrier()/')
rec=$(jq -nc --arg r "$near" '{task: {instruction: "a softmax kernel", reference: $r}}')
check_same "a near copy is dropped at the default 0.8" 1 "$(say "$rec" | geak-retrieve -c k | jq .oneshot.excluded)"
check_same "and kept at -t 1" 0 "$(say "$rec" | geak-retrieve -c k -t 1 | jq .oneshot.excluded)"

# -w: the code joins the description in instruction mode.
q='{"task":{"instruction":"take the max"}}'
check_same "by description only, a word of the code is not found" 'null' \
	"$(say "$q" | geak-retrieve -c crawl.json | jq -c .oneshot)"
check_same "with -w it is" '"crawl.json:0"' "$(say "$q" | geak-retrieve -w -c crawl.json | jq -c .oneshot.id)"
geak-retrieve --index w.idx -w -c crawl.json
check_same "an index built with -w keeps it" '"crawl.json:0"' "$(say "$q" | geak-retrieve -c w.idx | jq -c .oneshot.id)"
say "$q" | geak-retrieve -w -c w.idx >/dev/null 2>&1
check_same "-w with a prebuilt index is a usage error" 2 $?

# The index file.
check "--index builds an index" geak-retrieve --index k.idx -c k -c crawl.json
geak-retrieve --index k2.idx -c k -c crawl.json
check "the same corpora give the same bytes" cmp k.idx k2.idx
check_same "the index answers as the raw corpora do" \
	"$(say "$instr" | geak-retrieve -c k -c crawl.json --top 3 | jq -c .oneshots)" \
	"$(say "$instr" | geak-retrieve -c k.idx --top 3 | jq -c .oneshots)"
check_same "and lists the same entries" "$(geak-retrieve -l -c k -c crawl.json | jq -c 'del(.source)')" \
	"$(geak-retrieve -l -c k.idx | jq -c 'del(.source)')"
size=$(wc -c < k.idx)
head -c $((size - 8)) k.idx > short.idx
say "$instr" | geak-retrieve -c short.idx >/dev/null 2>err
check_same "a truncated index is refused (fatal)" 3 $?
check_match "saying why" 'short.idx: index truncated' "$(cat err)"
cp k.idx bent.idx
printf '\377\377\377\177' | dd of=bent.idx bs=1 seek=120 conv=notrunc 2>/dev/null
say "$instr" | geak-retrieve -c bent.idx >/dev/null 2>err
check_match "a section offset out of bounds is refused" 'out of bounds' "$(cat err)"
cp k.idx old.idx
printf '\011' | dd of=old.idx bs=1 seek=8 conv=notrunc 2>/dev/null
say "$instr" | geak-retrieve -c old.idx >/dev/null 2>err
check_match "another format version is refused" 'version 9' "$(cat err)"
check_fail "an index does not mix with other corpora" geak-retrieve -c k.idx -c k

# Usage.
geak-retrieve --top 0 </dev/null 2>/dev/null
check_same "--top 0 is a usage error" 2 $?
geak-retrieve -m fuzzy </dev/null 2>/dev/null
check_same "an unknown mode is a usage error" 2 $?
check_match "--help prints usage on stdout" '^usage: geak-retrieve' "$(geak-retrieve --help)"

# The shipped corpus, used when no --corpus is given.
if [ -f "$top/share/corpus/softmax.py" ] && [ -f "$top/share/corpus/rms_norm.py" ]; then
	out=$(echo '{"task":{"instruction":"Write a Triton kernel that computes the row-wise softmax of a 2-D tensor."}}' |
		geak-retrieve --top 3 | jq -r '.oneshots[].id')
	check_match "default corpus: a softmax task gets the softmax example in its top 3" '^softmax.py:' "$out"
	out=$(echo '{"task":{"instruction":"Implement RMSNorm: normalise each row by its root mean square and scale by a weight."}}' |
		geak-retrieve | jq -r .oneshot.id)
	check_match "default corpus: an RMS norm task gets the RMS norm example" '^rms_norm.py:' "$out"
else
	skip "share/corpus has no softmax.py and rms_norm.py"
	skip "share/corpus has no softmax.py and rms_norm.py"
fi
done_testing
