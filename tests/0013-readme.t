#!/bin/sh
# Every command in README.md's sh blocks, as written: in the README's
# order, in one shell, from a folder that holds the tree (links to its
# files, so what the commands write stays here), with the environment a
# user has after set-up and what the README tells them to set (its PATH
# line), and no key.  The commands that cannot run here are listed below
# with the reason; every other one runs here and must succeed, so a new
# command is either run or listed.  A listed one that the README no
# longer has fails too.
. "$(dirname "$0")/lib.sh"
have_python || skip_all "no Python with torch and triton ($GEAK_PYTHON)"
for c in jq make; do command -v $c >/dev/null || skip_all "no $c"; done
[ -x "$top/bin/geak-eval" ] && [ -x "$top/bin/geak-gen" ] || skip_all "tools not built"

# The command, as the README has it with its comment left out and its
# lines joined, then " ## " and why it is not run here.
not_run='
make deps check ## make check runs the whole suite, this test among it; make deps installs packages (root, network)
make deps ## it installs Debian packages and torch (root, network); tests/0014-deps.t runs its choice dry
geak-gen --check ## it asks the provider server (network, a key)
bin/geak-loop.sh -i 3 -n 4 -o out/softmax examples/demo/task.jsonl ## it asks a model (a key)
geak-eval < iter-0.jsonl | geak-reflect | geak-opt | geak-retrieve | geak-gen > iter-1.jsonl ## geak-gen asks a model (a key)
geak-import GEAK-eval > tasks.jsonl ## it reads the benchmark checkout (network)
bin/geak-loop.sh -i 5 -n 8 --max-cost 20 -o out tasks.jsonl ## it asks a model (a key) on the benchmark tasks
bin/geak-parallel.sh -R 4 -j 2 -g 0,1 -o par tasks.jsonl ## two GPUs, a key
geak-select -k 1,2,4 -s summary.json -r report.html par/run-*/evaluated-*.jsonl > best.jsonl ## it reads the runs of geak-parallel (two GPUs, a key)
geak-retrieve < tasks.jsonl | geak-gen -n 8 -j 16 --record ex.jsonl > cand.jsonl ## geak-gen asks a model (a key)
geak-eval -g 0,1 -j 8 < cand.jsonl > evaluated.jsonl ## two GPUs
bin/geak-slurm.sh runs -R 8 -i 10 -o out tasks.jsonl -- --partition=gpu --time=12:00:00 ## a Slurm cluster with GPUs
bin/geak-slurm.sh eval -j 16 -o evaluated.jsonl cand.jsonl -- --partition=gpu --time=2:00:00 ## a Slurm cluster with GPUs
git clone https://github.com/AMD-AGI/GEAK-eval ## network
for f in TritonBench/data/TritonBench_G_comp_alpac_v1_fixed_with_difficulty.json ROCm/data/ROCm_eval_complex_instruct_v1.json; do git -C GEAK-eval show "origin/geak-rocm:geak_eval/data/$f" > "${f##*/}" done ## it reads the clone of GEAK-eval (network)
geak-import GEAK-eval TritonBench_G_comp_alpac_v1_fixed_with_difficulty.json ROCm_eval_complex_instruct_v1.json > tasks.jsonl ## the benchmark checkout (network)
make bench BENCH_DATA=DIR ## the benchmark archives, and hours on the CPU
examples/bench/harness-check.sh --cpu GEAK-eval *.json ## the benchmark checkout (network)
'
# Stand-ins for what a command that is not run would have made.
stage() {
	jq -c '.code = .task.reference' "$top/examples/demo/task.jsonl" > cand.jsonl # geak-gen's
}

# ---- the commands: each sh block's lines, a command once the shell can
# parse it (a backslash or an open loop carries on to the next line) ----
mkdir cmd
awk '/^```sh[[:space:]]*$/ { on = 1; next } on && /^```/ { on = 0; print ""; next } on' \
	"$top/README.md" > blocks
# Each line without its comment: a # after a blank, outside quotes.
uncomment() {
	awk '{
		q = ""; out = ""
		for (i = 1; i <= length($0); i++) {
			c = substr($0, i, 1)
			if (q == "" && c == "#" && (i == 1 || substr($0, i - 1, 1) ~ /[ \t]/))
				break
			if (q == "" && (c == "\"" || c == "\047")) q = c
			else if (c == q) q = ""
			out = out c
		}
		print out
	}'
}
n=0
acc=
emit() {
	[ -n "$acc" ] || return 0
	key=$(printf '%s\n' "$acc" | uncomment |
		sed -e ':a' -e '/\\$/{N; s/\\\n//; ba' -e '}' | tr '\n' ' ' | tr -s ' \t' '  ' |
		sed 's/^ //; s/ $//')
	acc=
	[ -n "$key" ] || return 0 # a comment alone: nothing to run
	grep -qxF -- "$key" cmd/keys 2>/dev/null && return 0 # said before: run once
	n=$((n + 1))
	printf '%s\n' "$key" >> cmd/keys
	printf '%s\n' "$text" > "cmd/$n"
}
: > cmd/keys
while IFS= read -r line; do
	if [ -z "$line" ] && [ -z "$acc" ]; then
		continue
	fi
	if [ -z "$line" ]; then # a block's end
		text=$acc; emit
		continue
	fi
	acc=${acc:+$acc
}$line
	case $line in *\\) continue ;; esac
	sh -n -c "$acc" 2>/dev/null || continue
	text=$acc; emit
done < blocks
text=$acc; emit

listed=$(printf '%s\n' "$not_run" | sed -n 's/ ## .*//p')
runs=
i=0
while IFS= read -r key; do
	i=$((i + 1))
	printf '%s\n' "$listed" | grep -qxF -- "$key" || runs="$runs $i"
done < cmd/keys
plan $(($(echo $runs | wc -w) + 3))
stale=$(printf '%s\n' "$listed" | grep -v '^$' | grep -vxF -f cmd/keys)
check_same "every README command that is listed as not run is still in the README" "" "$stale"

# ---- the folder: the tree's files as links, the commands' own output here ----
mkdir tree home
for f in "$top"/* "$top"/.[!.]*; do
	case ${f##*/} in out|.git) continue ;; esac
	[ -e "$f" ] || [ -L "$f" ] || continue
	ln -s "$f" "tree/${f##*/}"
done
(cd tree && stage)

# The user's environment: no key, no geak settings, the tools not yet on
# PATH (what lib.sh put there taken off again).
user_path=$(printf '%s\n' "$PATH" | tr ':' '\n' | grep -vxF -e "$top/bin" -e "$top/tests/helpers" |
	paste -sd: -)
# DEPS_DRY_RUN: a make deps run here by mistake changes nothing.
DEPS_DRY_RUN=1
export DEPS_DRY_RUN
unset GEAK_SHAREDIR GEAK_BASE_URL GEAK_PROVIDER GEAK_MODEL GEAK_API_KEY GEAK_PROMPTS \
	GEAK_LLM_FLAGS GEAK_DEMO GEAK_DEMO_OUT GEAK_DEMO_NOBUILD GEAK_OPT_FLAGS
check_fail "without the README's PATH line the tools are not found" \
	env PATH="$user_path" sh -c 'command -v geak-eval'

# The program each command starts: its first word once the variables it
# sets for itself (NAME=value, the value possibly holding $(...)) are
# taken off, each quoted for the script.
program_names() {
	sed -E 's/^([A-Za-z_][A-Za-z0-9_]*=([^ $]|\$\([^)]*\)|\$)* +)*//; s/ .*//' |
		sort -u | sed "s/.*/'&'/" | tr '\n' ' '
}

# One script, so that what a command sets (PATH) holds for the next.
{
	echo 'cd "$1" || exit 9'
	i=0
	while IFS= read -r key; do
		i=$((i + 1))
		case " $runs " in *" $i "*) ;; *) continue ;; esac
		printf '{\n%s\n} > "$2/%s.out" 2> "$2/%s.err" < /dev/null\necho "%s $?" >> "$2/status"\n' \
			"$(cat "cmd/$i")" $i $i $i
	done < cmd/keys
	# Where the commands not run here would find their programs.
	printf 'for w in %s; do case $w in */*) [ -e "$w" ] ;; *) command -v "$w" ;; esac > /dev/null || echo "$w"; done > "$2/programs"\n' \
		"$(program_names < cmd/keys)"
} > readme.sh
mkdir run
env PATH="$user_path" HOME="$scratch/home" sh readme.sh "$scratch/tree" "$scratch/run"

i=0
while IFS= read -r key; do
	i=$((i + 1))
	case " $runs " in *" $i "*) ;; *) continue ;; esac
	got=$(sed -n "s/^$i //p" run/status)
	if [ "$got" = 0 ]; then
		ok "README: $key"
	else
		not_ok "README: $key (exit ${got:-none})"
		tail -n 15 "run/$i.err" | sed 's/^/# /'
	fi
done < cmd/keys
check_same "every program a README command starts is there, on the README's PATH" "" \
	"$(if [ -r run/programs ]; then tr '\n' ' ' < run/programs | sed 's/ $//'; else echo 'the README script did not run to its end'; fi)"
done_testing
